/**
 * The fields of Harbor's trial models (`models/trial/config.py`, `result.py`) with their defaults, as Harbor's
 * `model_dump_json` writes them: every field, nulls included, so that tools reading Harbor jobs find every key.
 * Fields Harbor leaves out when empty (`exclude_if`: `env`, `include_logs`, …) are left out here too.
 */

/** `TaskConfig` of a local task, its `path` aside. */
export const TASK_CONFIG_DEFAULTS = {
  git_url: null,
  git_commit_id: null,
  name: null,
  ref: null,
  overwrite: false,
  download_dir: null,
  source: null,
};

/** `AgentConfig`. */
export const AGENT_CONFIG_DEFAULTS = {
  name: null,
  import_path: null,
  model_name: null,
  n_concurrent: null,
  concurrency_group: null,
  skills: [],
  override_timeout_sec: null,
  override_setup_timeout_sec: null,
  max_timeout_sec: null,
  resume_trajectory: false,
  load_trajectory: null,
  extra_allowed_hosts: [],
  kwargs: {},
  mcp_servers: [],
};

/** `EnvironmentConfig`. */
export const ENVIRONMENT_CONFIG_DEFAULTS = {
  type: null,
  import_path: null,
  force_build: false,
  delete: true,
  cpu_enforcement_policy: 'auto',
  memory_enforcement_policy: 'auto',
  override_cpus: null,
  override_memory_mb: null,
  override_storage_mb: null,
  override_gpus: null,
  override_tpu: null,
  mounts: null,
  extra_docker_compose: [],
  kwargs: {},
  extra_allowed_hosts: [],
};

/** `VerifierConfig`. */
export const VERIFIER_CONFIG_DEFAULTS = { override_timeout_sec: null, max_timeout_sec: null, disable: false };

/** `TrialConfig`'s own fields besides task, trial name, trials dir, agent, environment and verifier. */
export const TRIAL_CONFIG_DEFAULTS = {
  install_only: false,
  timeout_multiplier: 1,
  agent_timeout_multiplier: null,
  verifier_timeout_multiplier: null,
  agent_setup_timeout_multiplier: null,
  environment_build_timeout_multiplier: null,
  user_agent: null,
  artifacts: [],
  extra_instruction_paths: [],
  extra_instructions: [],
  job_id: null,
  source_trial: null,
};

/** `TrialLock`'s fields besides task, agent, environment and verifier (no user agent, skills or extra inputs). */
export const TRIAL_LOCK_DEFAULTS = {
  install_only: false,
  timeout_multiplier: 1,
  agent_timeout_multiplier: null,
  verifier_timeout_multiplier: null,
  agent_setup_timeout_multiplier: null,
  environment_build_timeout_multiplier: null,
  extra_instructions: null,
  user_agent: null,
  user_persona: null,
  user_prompt_template: null,
  bridge_prompt: null,
  bridge_inputs: {},
  skills: [],
  extra_docker_compose: null,
  source_trial: null,
};
