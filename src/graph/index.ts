// Public exports of src/graph (filled in by its issue).
export {};
