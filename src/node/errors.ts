/** A mistake in the command line or the config: reported without a stack, exit code 2. */
export class UsageError extends Error {
  override name = 'UsageError';
}
