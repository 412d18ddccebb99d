// The studio's web app, from source like the rest of graphdock here (in the package it is served
// by `graphdock serve`; this example mounts the same app in its own page).
export { mountStudio } from "../../../src/studio/app/mount";
