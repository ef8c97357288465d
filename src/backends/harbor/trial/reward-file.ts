import path from 'node:path';
import { z } from 'zod';
import { readTrialFile, UnsafeTrialFileError } from './trial-files.ts';
import { TrialError, type TrialErrorType } from './trial-error.ts';

/** A reward file is a number or a small object of numbers; anything bigger is not one. */
const MAX_REWARD_FILE_BYTES = 1024 * 1024;

const RewardJsonSchema = z.record(z.string(), z.number().finite());

function rewardError(type: TrialErrorType, message: string): TrialError {
  return TrialError.of(type, 'VALIDATION_ERROR', 'grader', message);
}

/** The file's text, read without following links or blocking; a link, FIFO or huge file is an error. */
async function readIfExists(file: string): Promise<string | undefined> {
  try {
    return await readTrialFile(file, MAX_REWARD_FILE_BYTES);
  } catch (error) {
    if (error instanceof UnsafeTrialFileError) throw rewardError('UnsafeTrialFileError', error.message);
    throw error;
  }
}

function parseJsonRewards(text: string, file: string): Record<string, number> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw rewardError('VerifierOutputParseError', `${file} is not JSON: ${(error as Error).message}`);
  }
  const parsed = RewardJsonSchema.safeParse(value);
  if (!parsed.success) throw rewardError('VerifierOutputParseError', `${file} must be a flat object of finite numbers`);
  return parsed.data;
}

function parseTextReward(text: string, file: string): Record<string, number> {
  const reward = Number(text.trim());
  if (!/^[-+0-9.eE]+$/.test(text.trim()) || !Number.isFinite(reward)) {
    throw rewardError('VerifierOutputParseError', `${file} must hold one finite number, got "${text.trim().slice(0, 80)}"`);
  }
  return { reward };
}

/**
 * Reads the verifier's rewards as Harbor does: `reward.json` (a flat object of numbers) first, else
 * `reward.txt` (one number, becoming `{reward}`). A missing, empty or unparsable file is its own error.
 */
export async function readRewardFiles(verifierDir: string): Promise<Record<string, number>> {
  for (const [name, parse] of [['reward.json', parseJsonRewards], ['reward.txt', parseTextReward]] as const) {
    const file = path.join(verifierDir, name);
    const text = await readIfExists(file);
    if (text === undefined) continue;
    if (!text.trim()) throw rewardError('RewardFileEmptyError', `${file} is empty`);
    return parse(text, file);
  }
  throw rewardError('RewardFileNotFoundError', `the verifier wrote neither reward.json nor reward.txt in ${verifierDir}`);
}
