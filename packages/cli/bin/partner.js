#!/usr/bin/env node
// The `partner` command. A file of its own, committed, so that npm links it on a fresh `npm ci`
// (dist/ is built after the links are made; a bin pointing into dist/ was not linked).
import '../dist/main.js';
