#!/usr/bin/env node
import { runCommandLine } from './cli/run.js';

runCommandLine(process.argv.slice(2), { env: process.env, stdout: process.stdout, stderr: process.stderr }).then(
  (code) => {
    if (code !== 0) process.exitCode = code;
  },
);
