// Public exports of src/auth (filled in by its issue).
export {};
