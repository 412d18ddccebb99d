// Placeholder: the command-line server (issue 7).
export {};
