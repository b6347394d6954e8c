export {};
/**
 * Prints `N passed, N failed` from a JUnit XML report (bun test prints no such line). Skipped and
 * todo tests count as neither. Exits 1 when the report is missing or unreadable.
 */
const file = process.argv[2] ?? "test-results/junit.xml";
let xml: string;
try {
  xml = await Bun.file(file).text();
} catch {
  console.log("0 passed, 1 failed");
  console.error(`no JUnit report at ${file}`);
  process.exit(1);
}
let passed = 0;
let failed = 0;
for (const m of xml.matchAll(/<testcase\b[^>]*?(\/>|>([\s\S]*?)<\/testcase>)/g)) {
  const inner = m[2] ?? "";
  if (/<(failure|error)\b/.test(inner)) failed++;
  else if (/<skipped\b/.test(inner)) continue;
  else passed++;
}
console.log(`${passed} passed, ${failed} failed`);
