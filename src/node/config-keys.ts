/**
 * Every key of langgraph.json, as the LangGraph CLI's config schema names them (langgraph-cli
 * 0.4.31, libs/cli/schemas/schema.json, plus the keys the JS CLI adds), and what `graphdock serve`
 * does with each (D93): most are honoured; those that describe the Docker image `langgraph build`
 * makes are noted in one line; the few graphdock cannot honour are warned about by name; an
 * unknown key is warned about by name; `encryption` is refused, since starting without the
 * encryption a deployment asked for would store its data in the clear.
 */
import { isPlainObject } from "../json.js";

/** The schema followed. */
export const CONFIG_SCHEMA = "langgraph-cli 0.4.31";

/** A key graphdock honours. */
const H = "honoured";
/** A key of the image `langgraph build` makes: no meaning for a server started in this process. */
const B = "build";

/** Why a key cannot be honoured (warned about), or, with `refuse`, why the server does not start. */
interface Unsupported {
  why: string;
  refuse?: true;
}

type Spec = typeof H | typeof B | Unsupported | { readonly [key: string]: Spec };

/** A key set to anything but false/null/empty is warned about with this reason. */
const no = (why: string): Unsupported => ({ why });

/** The schema's keys (nested objects are nested specs; `graphs` and `env` hold names of the user's). */
const SCHEMA: Record<string, Spec> = {
  $schema: H,
  graphs: H,
  env: H,
  auth: {
    path: H,
    disable_studio_auth: no("the studio's requests go through the auth handler like any other"),
    openapi: no("the OpenAPI document does not list the auth handler's security schemes"),
    cache: no("the auth handler runs for every request; nothing is cached"),
  },
  store: {
    index: { dims: H, embed: H, fields: H },
    ttl: { default_ttl: H, refresh_on_read: H, sweep_interval_minutes: H },
  },
  checkpointer: {
    ttl: { strategy: H, default_ttl: H, sweep_interval_minutes: H, sweep_limit: H },
    path: no("checkpoints live in the store chosen with --store"),
    serde: no("checkpoints are stored as plain JSON; serializer settings do not apply"),
  },
  encryption: { why: "graphdock does not encrypt data at rest; remove `encryption` or keep this deployment on a server that does", refuse: true },
  http: {
    app: H,
    disable_assistants: H,
    disable_threads: H,
    disable_runs: H,
    disable_store: H,
    disable_meta: H,
    disable_mcp: H,
    disable_a2a: H,
    disable_ui: H,
    disable_webhooks: H,
    // graphdock's own: its other endpoints and route groups.
    disable_crons: H,
    disable_ai_sdk: H,
    disable_studio: H,
    cors: {
      allow_origins: H,
      max_age: H,
      allow_methods: no("every method of the API is allowed"),
      allow_headers: no("the headers a preflight asks for are allowed"),
      allow_credentials: no("credentialed requests are not allowed across origins"),
      allow_origin_regex: no("list the origins in allow_origins"),
      expose_headers: no("the headers the SDK reads are exposed"),
    },
    configurable_headers: { includes: H, excludes: H, include: H, exclude: H },
    logging_headers: no("request log lines carry no headers"),
    middleware_order: no("custom routes (http.app) are served before the API, with their own middleware"),
    enable_custom_route_auth: no("custom routes (http.app) are not behind the auth handler"),
    mount_prefix: H,
  },
  webhooks: no("run webhooks are allowed only towards this server's own custom routes"),
  ui: no("generative UI components are not served"),
  ui_config: no("generative UI components are not served"),
  node_version: B,
  dependencies: B,
  python_version: B,
  pip_config_file: B,
  pip_installer: B,
  api_version: B,
  base_image: B,
  image_distro: B,
  dockerfile_lines: B,
  docker_compose_file: B,
  keep_pkg_tools: B,
  source: B,
  node_loader: B,
  _INTERNAL_docker_tag: B,
};

/** What the keys of a config come to: warnings (each naming its key), build-only keys, and refusals. */
export interface KeyReport {
  warnings: string[];
  /** Keys only `langgraph build` reads (noted in one line). */
  build: string[];
  /** Keys graphdock will not start with, with the reason. */
  refused: string[];
}

/** Reports every key of `config` (see the module comment). */
export function checkKeys(config: Record<string, unknown>): KeyReport {
  const report: KeyReport = { warnings: [], build: [], refused: [] };
  const walk = (value: Record<string, unknown>, spec: Record<string, Spec>, prefix: string) => {
    for (const [key, child] of Object.entries(value)) {
      const path = `${prefix}${key}`;
      const rule = spec[key];
      if (rule === undefined) {
        report.warnings.push(`unknown key "${path}" (not in langgraph.json's schema, ${CONFIG_SCHEMA}): ignored`);
      } else if (rule === B) {
        report.build.push(path);
      } else if (rule === H) {
        continue;
      } else if ("why" in rule && typeof rule.why === "string") {
        if (child === undefined || child === null || child === false || (Array.isArray(child) && child.length === 0)) continue;
        if (rule.refuse) report.refused.push(`"${path}": ${rule.why}`);
        else report.warnings.push(`"${path}" is not supported: ${rule.why}; ignored`);
      } else if (isPlainObject(child)) {
        walk(child, rule as Record<string, Spec>, `${path}.`);
      }
    }
  };
  walk(config, SCHEMA, "");
  return report;
}
