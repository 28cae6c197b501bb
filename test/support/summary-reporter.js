// Ends the run with a plain "N passed, N failed, N skipped" line, the summary CI reads. Jest prints
// its own summary after every reporter's onRunComplete, so the line is written at process exit.
class SummaryReporter {
  onRunComplete(_contexts, results) {
    const skipped = results.numPendingTests + results.numTodoTests;
    const failed = results.numFailedTests + results.numRuntimeErrorTestSuites;
    const line = `\n${results.numPassedTests} passed, ${failed} failed, ${skipped} skipped\n`;
    process.once('exit', () => process.stderr.write(line));
  }
}
module.exports = SummaryReporter;
