// Preloaded into every process a test starts through test/helpers/cli.ts (CHILD_ARGS): when the
// test process is gone without stopping it (killed outright at a timeout, or by the runner), the
// child stops itself rather than run on with its temporary directory deleted. On Linux an
// orphan is handed to another parent, so a changed ppid says the test process has gone.
const parent = process.ppid;
const watch = setInterval(() => {
  if (process.ppid === parent) return;
  clearInterval(watch);
  process.kill(process.pid, 'SIGTERM');
  // One that a SIGTERM does not stop (a drain waiting on something) is killed.
  setTimeout(() => process.kill(process.pid, 'SIGKILL'), 10_000).unref();
}, 250);
// The watch keeps nothing alive: a child that would exit, exits.
watch.unref();
