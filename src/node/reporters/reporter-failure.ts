/** What a reporter threw, as text: an error's stack (its name and message first), else the value itself. */
export function describeFailure(error: unknown): string {
  try {
    return error instanceof Error ? (error.stack ?? `${error.name}: ${error.message}`) : String(error);
  } catch {
    // An object whose `toString` throws, a getter that throws.
    return `a thrown ${typeof error} that cannot be printed`;
  }
}
