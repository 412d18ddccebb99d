/**
 * The command's environment variables, `GRAPHDOCK_<NAME>`. The package was called agentdock
 * before, so `AGENTDOCK_<NAME>` is still read when the new name is not set, with a deprecation
 * warning (once per variable).
 */
const warned = new Set<string>();

/** The value of `GRAPHDOCK_<name>`, else of the former `AGENTDOCK_<name>` (warned about). */
export function readEnv(name: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const current = env[`GRAPHDOCK_${name}`];
  if (current !== undefined) return current;
  const former = env[`AGENTDOCK_${name}`];
  if (former !== undefined && !warned.has(name)) {
    warned.add(name);
    process.emitWarning(`AGENTDOCK_${name} is deprecated; set GRAPHDOCK_${name} instead`, { type: "DeprecationWarning", code: "GRAPHDOCK_ENV" });
  }
  return former;
}
