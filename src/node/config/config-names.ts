/** The config file's names, looked for in this order in the root when no `--config` is given. */
export const CONFIG_NAMES = ['rollout.config.ts', 'rollout.config.mts', 'rollout.config.js', 'rollout.config.mjs'];
