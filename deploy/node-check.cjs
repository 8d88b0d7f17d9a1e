/**
 * The Node.js version check `npm start` and `npm run unstuck` run first (package.json "prestart",
 * "unstuck"), before any build or bundle: on a Node older than package.json's `engines.node` the
 * bundle fails deep inside a dependency with a minified stack, so this says it in one line instead:
 *
 *   unstuck needs Node.js >= 24 (this is v20.20.2): nvm use, or see README
 *
 * and exits 1. Plain CommonJS and ES5 (var, function, no arrow, no template string) so that any old
 * Node runs it. `UNSTUCK_NODE_CHECK_VERSION=v20.1.0` checks that version instead of the running one
 * (the tests' hook when the machine's node is already new enough).
 */
"use strict";

/** `v20.20.2`, `20.20`, `>=24`, `>= 24.1.0` -> [20, 20, 2]; null when it holds no number. */
function versionParts(text) {
  var match = /(\d+)(?:\.(\d+))?(?:\.(\d+))?/.exec(String(text));
  if (!match) return null;
  return [Number(match[1]), Number(match[2] || 0), Number(match[3] || 0)];
}

/** The minimum a `>=X[.Y[.Z]]` engines range names, as written (`24`, `24.1.0`); null otherwise. */
function minimumOf(range) {
  var match = /^\s*>=\s*v?(\d+(?:\.\d+){0,2})\s*$/.exec(String(range));
  return match ? match[1] : null;
}

/**
 * The one line to print when `version` (e.g. `v20.20.2`) is older than the `>=` range, else null.
 * A range this check does not understand passes (npm's own engine check still reads it).
 */
function nodeCheck(name, version, range) {
  var minimum = minimumOf(range);
  if (minimum === null) return null;
  var want = versionParts(minimum);
  var have = versionParts(version);
  if (want === null) return null;
  if (have !== null) {
    for (var i = 0; i < 3; i++) {
      if (have[i] > want[i]) return null;
      if (have[i] < want[i]) break;
      if (i === 2) return null;
    }
  }
  var shown = /^v/.test(String(version)) ? String(version) : "v" + String(version);
  return name + " needs Node.js >= " + minimum + " (this is " + shown + "): nvm use, or see README";
}

module.exports = { nodeCheck: nodeCheck, minimumOf: minimumOf };

if (require.main === module) {
  var pkg = require("../package.json");
  var name = process.argv[2] || pkg.name;
  var range = pkg.engines && pkg.engines.node;
  var version = process.env.UNSTUCK_NODE_CHECK_VERSION || process.version;
  var line = nodeCheck(name, version, range);
  if (line !== null) {
    process.stderr.write(line + "\n");
    process.exit(1);
  }
}
