import type { EnvironmentType } from '../environments/environment.ts';
import type { TaskConfig } from './task-config.ts';

/** What a task asks for that trials cannot give: errors stop it at load, warnings are reported with each trial. */
export interface UnsupportedKeys {
  errors: string[];
  warnings: string[];
}

/** What the task directory holds besides task.toml, as far as support depends on it. */
export interface TaskLayout {
  compose: boolean;
  /** `trajectory.json` beside an instruction: prior context Harbor seeds into its agents. */
  trajectory: boolean;
}

const isMain = (service: string | undefined) => service === undefined || service === 'main';

/**
 * Names each key of task.toml (and layout file) that trials cannot honour, so that none is silently ignored.
 * A task that needs hardware or another OS, a compose file outside docker, or sidecar artifacts or collect
 * hooks is an error: running it anyway would grade something else. Network allowlists, MCP servers and skills only
 * change what the agent is offered, so they are warnings, and the trial runs without them (no network).
 */
export function unsupportedKeys(config: TaskConfig, layout: TaskLayout, environment?: EnvironmentType): UnsupportedKeys {
  const errors: string[] = [];
  const warnings: string[] = [];
  const { environment: table, verifier } = config;
  const extra = table as Record<string, unknown>;
  if (table.gpus) errors.push(`[environment] gpus = ${table.gpus}: trials have no GPUs`);
  if (extra.gpu_types !== undefined) errors.push('[environment] gpu_types: trials have no GPUs');
  if (extra.tpu !== undefined) errors.push('[environment] tpu: trials have no TPUs');
  if (table.os !== 'linux') errors.push(`[environment] os = "${table.os}": trials run Linux only`);
  if (layout.compose && environment && environment !== 'docker') errors.push(`environment/docker-compose.yaml: compose services run in the docker environment only, not ${environment}`);
  const verifiers = [{ where: '[verifier]', verifier }, ...(config.steps ?? []).map((step) => ({ where: `[[steps]] "${step.name}" verifier`, verifier: step.verifier }))];
  for (const { where, verifier: v } of verifiers) {
    for (const hook of v.collect) if (!isMain(hook.service)) errors.push(`${where} collect service = "${hook.service}": compose services are not supported`);
  }
  for (const entry of [...config.artifacts, ...(config.steps ?? []).flatMap((step) => step.artifacts)]) {
    if (typeof entry !== 'string' && !isMain(entry.service)) errors.push(`artifacts service = "${entry.service}": compose services are not supported`);
  }
  if (table.network_mode === 'allowlist' || table.allowed_hosts) {
    warnings.push('[environment] network_mode = "allowlist" / allowed_hosts: allowlists are not supported; the trial has no network');
  }
  for (const { where, table: phase } of phaseTables(config)) {
    for (const key of ['network_mode', 'allowed_hosts'] as const) {
      if (phase[key] !== undefined) warnings.push(`[${where}] ${key}: per-phase network policies are not supported; the trial keeps [environment]'s`);
    }
  }
  if (Array.isArray(extra.mcp_servers) && extra.mcp_servers.length) warnings.push('[environment] mcp_servers: MCP servers are not given to the agent');
  if (extra.skills_dir !== undefined) warnings.push('[environment] skills_dir: skills are not installed for the agent');
  if (layout.trajectory) warnings.push('trajectory.json: a prior trajectory is not loaded into the agent');
  return { errors, warnings };
}

/** The [agent] and [verifier] tables of the task and of each of its steps, named as task.toml writes them. */
function phaseTables(config: TaskConfig): Array<{ where: string; table: { network_mode?: unknown; allowed_hosts?: unknown } }> {
  const steps = (config.steps ?? []).flatMap((step) => [
    { where: `steps."${step.name}".agent`, table: step.agent },
    { where: `steps."${step.name}".verifier`, table: step.verifier },
  ]);
  return [{ where: 'agent', table: config.agent }, { where: 'verifier', table: config.verifier }, ...steps];
}
