// Public exports of src/runtime (filled in by its issue).
export {};
