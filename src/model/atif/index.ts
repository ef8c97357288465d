/** ATIF trajectories: the schema, a rollout's trajectory from its samples, a sample from a trajectory, and a controller's report folded in. */
export { ATIF_VERSION, type AtifStep, type Trajectory, TrajectorySchema } from './atif-schema.ts';
export { type CallTokens, trajectoryOfSamples } from './from-samples.ts';
export { sampleOfTrajectory } from './to-sample.ts';
export { ControllerReportSchema, foldControllerReport } from './controller-report.ts';
export { trajectoryJson } from './format.ts';
