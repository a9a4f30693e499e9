// record-check.mjs - every line of sieve crawl's records, judged by ajv
// against docs/record.schema.json, and its keys in the schema's order
// (the order of "required", which is the properties' order), and the
// bounds between fields that a schema cannot state.
//
// usage: node record-check.mjs AJV_PREFIX SCHEMA RECORDS.jsonl...
// Prints what is wrong and exits 1 on any problem, or on no record at all.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [prefix, schemaPath, ...files] = process.argv.slice(2);
const load = async (pkg, file) =>
  (await import(pathToFileURL(join(prefix, "node_modules", pkg, "dist", file)).href)).default;
const Ajv2020 = await load("ajv", "2020.js");
const addFormats = await load("ajv-formats", "index.js");

const schema = JSON.parse(readFileSync(schemaPath, "utf8"));
const ajv = new Ajv2020({ allErrors: true, strict: true, strictRequired: false });
addFormats(ajv);
const validate = ajv.compile(schema);
const order = schema.required.join(",");

let problems = 0, records = 0;
function problem(msg) {
  if (++problems <= 30) console.error(`record-check: ${msg}`);
}
for (const file of files) {
  const lines = readFileSync(file, "utf8").split("\n");
  if (lines.pop() !== "") problem(`${file}: the last line has no newline`);
  lines.forEach((line, i) => {
    records++;
    let r;
    try {
      r = JSON.parse(line);
    } catch (e) {
      return problem(`${file}:${i + 1}: not JSON: ${e.message}`);
    }
    if (!validate(r))
      problem(`${file}:${i + 1}: ${ajv.errorsText(validate.errors)}\n  ${line}`);
    else if (Object.keys(r).join(",") !== order)
      problem(`${file}:${i + 1}: keys out of order: ${Object.keys(r).join(",")}`);
    // what a schema cannot say: one field bounded by another
    else if (r.links_new > r.links_found)
      problem(`${file}:${i + 1}: links_new ${r.links_new} > links_found ${r.links_found}`);
  });
}
if (records === 0) problem("no record at all");
console.log(`record-check: ${files.length} files, ${records} records, ${problems} problems`);
process.exit(problems ? 1 : 0);
