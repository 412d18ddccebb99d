// Public exports of src/upload (filled in by its issue).
export {};
