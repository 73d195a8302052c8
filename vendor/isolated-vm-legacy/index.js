// The whole package: isolated-vm 5.0.4 under a name whose `engines` stop at Node 24, so that npm
// skips it (an optional dependency whose engines exclude the running Node) instead of trying to
// compile it against headers it cannot build with (see README.md).
"use strict";
module.exports = require("isolated-vm");
