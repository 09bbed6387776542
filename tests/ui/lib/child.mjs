// A child process owned by a test or benchmark: output captured to memory
// (the last 64 KiB of each stream), always stopped (stop() sends SIGTERM,
// then SIGKILL after a grace period), and described with its command line and
// output tail when something goes wrong.
import { spawn } from 'node:child_process';
import { basename } from 'node:path';

const KEEP_BYTES = 64 * 1024;

export class Child {
  constructor(argv, { env, name } = {}) {
    this.argv = argv.map(String);
    this.name = name || basename(this.argv[0]);
    this.out = '';
    this.err = '';
    this.exitCode = undefined; // undefined while running; a number or signal name after
    this.proc = spawn(this.argv[0], this.argv.slice(1), {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, ...(env || {}) },
    });
    const keep = (s, chunk) => (s + chunk).slice(-KEEP_BYTES);
    this.proc.stdout.on('data', (c) => (this.out = keep(this.out, c.toString())));
    this.proc.stderr.on('data', (c) => (this.err = keep(this.err, c.toString())));
    this.exited = new Promise((resolve) => {
      this.proc.on('exit', (code, signal) => {
        this.exitCode = code ?? signal;
        resolve(this.exitCode);
      });
      this.proc.on('error', (e) => {
        this.err += `\nspawn failed: ${e.message}`;
        this.exitCode = 'spawn-error';
        resolve(this.exitCode);
      });
    });
  }

  get pid() {
    return this.proc.pid;
  }

  running() {
    return this.exitCode === undefined;
  }

  async stop(graceMs = 5000) {
    if (!this.running()) return this.exitCode;
    this.proc.kill('SIGTERM');
    const timer = setTimeout(() => this.running() && this.proc.kill('SIGKILL'), graceMs);
    await this.exited;
    clearTimeout(timer);
    return this.exitCode;
  }

  describe() {
    const state = this.running() ? 'still running' : `exited with ${this.exitCode}`;
    return `${this.name} (${this.argv.join(' ')}) ${state}\n--- stderr ---\n${this.err.slice(-3000)}\n--- stdout ---\n${this.out.slice(-1500)}`;
  }
}
