// Ends the run with a plain "N passed, N failed, N skipped" line, the summary CI reads, after a line
// saying how long the whole run took (npm test is the full suite; its time is worth watching).
// Jest prints its own summary after every reporter's onRunComplete, so the lines are written at
// process exit.
class SummaryReporter {
  onRunComplete(_contexts, results) {
    const skipped = results.numPendingTests + results.numTodoTests;
    const failed = results.numFailedTests + results.numRuntimeErrorTestSuites;
    const seconds = Math.round((Date.now() - results.startTime) / 1000);
    const files = results.numTotalTestSuites;
    const lines = `\nRan ${files} test file${files === 1 ? '' : 's'} in ${seconds} s\n${results.numPassedTests} passed, ${failed} failed, ${skipped} skipped\n`;
    process.once('exit', () => process.stderr.write(lines));
  }
}
module.exports = SummaryReporter;
