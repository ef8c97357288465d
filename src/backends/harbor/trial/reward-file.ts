import path from 'node:path';
import * as z from 'zod';
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

/** Parses reward.json: a flat object of finite numbers. */
export function parseRewardJson(text: string, file: string): Record<string, number> {
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

/** Digits with single underscores between them, as Python's number literals allow. */
const DIGITS = String.raw`\d(?:_?\d)*`;
/** What Python's `float()` accepts, besides inf and nan: a decimal with an optional exponent. */
const PYTHON_FLOAT = new RegExp(String.raw`^[+-]?(?:${DIGITS}(?:\.(?:${DIGITS})?)?|\.${DIGITS})(?:[eE][+-]?${DIGITS})?$`);
const PYTHON_NON_FINITE = /^[+-]?(?:inf|infinity|nan)$/i;

/**
 * Parses reward.txt as Harbor does, with Python's `float()`: surrounding whitespace is ignored, and `1`,
 * ` 0.5\n`, `1e0`, `+.5`, `1_000` are numbers. Harbor would accept `inf` and `nan` too; here a non-finite
 * reward is an error, since no threshold can judge it.
 */
export function parseRewardText(text: string, file: string): Record<string, number> {
  const trimmed = text.trim();
  if (PYTHON_NON_FINITE.test(trimmed)) throw rewardError('VerifierOutputParseError', `${file} holds a non-finite reward "${trimmed}"`);
  if (!PYTHON_FLOAT.test(trimmed)) {
    throw rewardError('VerifierOutputParseError', `${file} must hold one number, got "${trimmed.slice(0, 80)}"`);
  }
  const reward = Number(trimmed.replaceAll('_', ''));
  if (!Number.isFinite(reward)) throw rewardError('VerifierOutputParseError', `${file} holds a reward too large to be finite: "${trimmed.slice(0, 80)}"`);
  return { reward };
}

/**
 * Reads the verifier's rewards as Harbor does: `reward.json` (a flat object of numbers) first, else
 * `reward.txt` (one number, becoming `{reward}`). A missing, empty (0 bytes) or unparsable file is its own error.
 */
export async function readRewardFiles(verifierDir: string): Promise<Record<string, number>> {
  for (const [name, parse] of [['reward.json', parseRewardJson], ['reward.txt', parseRewardText]] as const) {
    const file = path.join(verifierDir, name);
    const text = await readIfExists(file);
    if (text === undefined) continue;
    if (!text) throw rewardError('RewardFileEmptyError', `${file} is empty`);
    return parse(text, file);
  }
  throw rewardError('RewardFileNotFoundError', `the verifier wrote neither reward.json nor reward.txt in ${verifierDir}`);
}
