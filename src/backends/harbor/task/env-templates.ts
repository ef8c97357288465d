/** A whole value `${VAR}` or `${VAR:-default}`, as Harbor's `resolve_env_vars` matches it. */
const TEMPLATE = /^\$\{([^}:]+)(?::-(.*))?\}$/;

/**
 * Resolves an env table of task.toml as Harbor does: a value that is entirely `${VAR}` takes the host's
 * `VAR`, `${VAR:-default}` falls back to `default` when `VAR` is unset (an empty `VAR` is kept), and any
 * other value is literal. A `${VAR}` whose variable is unset, with no default, is an error naming it.
 */
export function resolveEnvTemplates(env: Record<string, string>, host: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const resolved: Record<string, string> = {};
  for (const [key, value] of Object.entries(env)) {
    const match = TEMPLATE.exec(value);
    if (!match) {
      resolved[key] = value;
      continue;
    }
    const [, name, fallback] = match as unknown as [string, string, string | undefined];
    const found = host[name];
    if (found !== undefined) resolved[key] = found;
    else if (fallback !== undefined) resolved[key] = fallback;
    else throw new Error(`${key} = "${value}": the environment variable ${name} is not set on the host, and the template gives no default`);
  }
  return resolved;
}
