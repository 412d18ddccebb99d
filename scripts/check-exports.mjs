// Checks the built package: every path named in package.json "exports", "typesVersions" and "bin"
// exists in dist/, every subpath export has its typesVersions entry,
// every tsup entry has an export, publint finds no errors, the core entry bundles for a browser
// target with no Node built-ins (D18), and the studio's web app is built (dist/studio/index.html
// and every asset it names).
import { existsSync, readFileSync } from "node:fs";
import { build } from "esbuild";
import { publint } from "publint";

const pkg = JSON.parse(readFileSync("package.json", "utf8"));
const problems = [];

function walk(target, where) {
  if (typeof target === "string") {
    if (!existsSync(target)) problems.push(`${where} -> ${target} does not exist (run npm run build)`);
  } else if (target && typeof target === "object") {
    for (const [k, v] of Object.entries(target)) walk(v, `${where}[${k}]`);
  }
}
for (const [subpath, target] of Object.entries(pkg.exports)) walk(target, `exports["${subpath}"]`);
// TypeScript's node10 resolution (TS 5.x; TS 7 dropped it) finds subpath types only through typesVersions.
const typesVersions = pkg.typesVersions?.["*"] ?? {};
for (const subpath of Object.keys(pkg.exports)) {
  const name = subpath.slice(2);
  if (subpath === "." || name === "package.json") continue;
  if (!typesVersions[name]) problems.push(`exports["${subpath}"] has no typesVersions entry (node10 resolution would not find its types)`);
  else walk(typesVersions[name], `typesVersions["${name}"]`);
}
for (const [name, target] of Object.entries(pkg.bin ?? {})) walk(target, `bin["${name}"]`);

const shell = "dist/studio/index.html";
if (!existsSync(shell)) problems.push(`${shell} does not exist (npm run build builds the studio with Vite)`);
else {
  for (const [, asset] of readFileSync(shell, "utf8").matchAll(/(?:src|href)="\.\/(assets\/[^"]+)"/g)) {
    if (!existsSync(`dist/studio/${asset}`)) problems.push(`${shell} names ${asset}, which does not exist`);
  }
}

const { messages } = await publint({ pkgDir: ".", level: "error" });
for (const m of messages) if (m.type === "error") problems.push(`publint: ${m.code} ${JSON.stringify(m.args)}`);

try {
  await build({
    entryPoints: ["dist/index.js"],
    bundle: true,
    platform: "browser",
    format: "esm",
    write: false,
    logLevel: "silent",
  });
} catch (err) {
  const text = (err.errors ?? []).map((e) => e.text).join("; ") || String(err);
  problems.push(`the core entry does not bundle for the browser: ${text}`);
}

if (problems.length) {
  console.error("check-exports failed:\n- " + problems.join("\n- "));
  process.exit(1);
}
console.log(`check-exports: ${Object.keys(pkg.exports).length} exports resolve, publint clean, core bundles for the browser`);
