/**
 * Prints one plain closing line, "jest: N passed, N failed, N skipped", that any CI log reader understands.
 * In CI (CI=true) a skipped test fails the run: a test that matters must run on a fresh machine, not skip there.
 */
export default class SummaryReporter {
  #error = undefined;

  onRunComplete(_contexts, results) {
    const skipped = results.numPendingTests + results.numTodoTests;
    if (skipped > 0 && /^(1|true)$/i.test(process.env.CI ?? '')) {
      const names = results.testResults.flatMap((file) =>
        file.testResults.filter((t) => t.status === 'pending' || t.status === 'todo').map((t) => `${file.testFilePath.replace(`${process.cwd()}/`, '')}: ${t.fullName}`));
      process.stdout.write(`\nCI=true and ${skipped} test(s) skipped — a skip is a failure in CI:\n${names.map((n) => `  ${n}`).join('\n')}\n`);
      this.#error = new Error(`${skipped} test(s) skipped in CI`);
    }
    process.stdout.write(`\njest: ${results.numPassedTests} passed, ${results.numFailedTests} failed, ${skipped} skipped\n`);
  }

  getLastError() {
    return this.#error;
  }
}
