// Ends the run with a plain "N passed, N failed, N skipped" line, the summary CI reads.
class SummaryReporter {
  onRunComplete(_contexts, results) {
    const skipped = results.numPendingTests + results.numTodoTests;
    const failedSuites = results.numRuntimeErrorTestSuites;
    process.stdout.write(
      `\n${results.numPassedTests} passed, ${results.numFailedTests + failedSuites} failed, ${skipped} skipped\n`,
    );
  }
}
module.exports = SummaryReporter;
