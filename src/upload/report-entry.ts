/**
 * `graphdock/report`: renders an experiment comparison as one self-contained HTML page or as CSV.
 * A subpath of its own so that apps which do not render reports do not carry the renderer.
 */
export { compareCsv, compareReport } from "./report.js";
