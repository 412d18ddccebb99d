// npm "prepare": build dist/ when npm prepares this package as a git dependency
// (`npm install github:graphdock/graphdock`). npm installs a git dependency's devDependencies
// and runs its prepare script in the clone before packing it, and marks that install with
// _PACOTE_NO_PREPARE_. A development checkout's own `npm ci` / `npm install` skips the build
// (`npm test` and `npm pack` build anyway). GRAPHDOCK_BUILD_ON_INSTALL=1 forces it.
import { spawnSync } from "node:child_process";

const asGitDependency = process.env._PACOTE_NO_PREPARE_ !== undefined;
if (asGitDependency || process.env.GRAPHDOCK_BUILD_ON_INSTALL === "1") {
  const npm = process.env.npm_execpath;
  const run = npm ? spawnSync(process.execPath, [npm, "run", "build"], { stdio: "inherit" }) : spawnSync("npm", ["run", "build"], { stdio: "inherit", shell: true });
  process.exit(run.status ?? 1);
}
