/**
 * The studio as served by its endpoint: the shell names the studio's root relative to this page
 * (`<meta name="graphdock-studio-root">`); the API is the root's parent (`/studio` is mounted
 * beside the API, under the same base path).
 */
import { mountStudio } from "./mount.js";

const meta = document.querySelector<HTMLMetaElement>('meta[name="graphdock-studio-root"]');
const root = new URL(meta?.content ?? "./", location.href);
const apiUrl = new URL("..", root).href;
mountStudio(document.getElementById("studio")!, { apiUrl, routes: { root } });
