/**
 * scripts/test's last line (`N passed, N failed`, what CI reads) from bun's JUnit report and exit status:
 * a run whose only failure is outside any test (a test file that did not load: bun's "# Unhandled error
 * between tests", exit 1, and no failed <testcase>) read "3772 passed, 0 failed" before.
 */
import { expect, test } from "bun:test";
import { junitCounts } from "../../scripts/junit-summary.ts";

const report = (cases: string) => `<?xml version="1.0" encoding="UTF-8"?>
<testsuites name="bun test" tests="3" failures="0">
  <testsuite name="a.test.ts" tests="3">
${cases}
  </testsuite>
</testsuites>`;
const ok = `<testcase name="one" classname="a" time="0.1" />
    <testcase name="two" classname="a" time="0.1"></testcase>
    <testcase name="skipped" classname="a" time="0"><skipped /></testcase>`;

test("passed and failed tests are counted from the report; skipped ones are neither", () => {
  expect(junitCounts(report(ok))).toEqual({ passed: 2, failed: 0, outsideTests: false });
  expect(junitCounts(report(`${ok}\n<testcase name="bad" classname="a"><failure message="x" /></testcase>`), 1)).toEqual({ passed: 2, failed: 1, outsideTests: false });
});

test("bun failed with no failed test in the report: an error outside the tests counts as one failure", () => {
  expect(junitCounts(report(ok), 1)).toEqual({ passed: 2, failed: 1, outsideTests: true });
});

test("the script's line, as scripts/test prints it", async () => {
  const file = `${process.env.TMPDIR ?? "/tmp"}/sy-junit-${process.pid}.xml`;
  await Bun.write(file, report(ok));
  const run = (status: string) => {
    const p = Bun.spawnSync(["bun", `${import.meta.dir}/../../scripts/junit-summary.ts`, file, status]);
    return { out: p.stdout.toString().trim(), err: p.stderr.toString() };
  };
  expect(run("0").out).toBe("2 passed, 0 failed");
  const failedRun = run("1");
  expect(failedRun.out).toBe("2 passed, 1 failed");
  expect(failedRun.err).toContain("an error outside the tests");
});
