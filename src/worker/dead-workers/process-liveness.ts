/**
 * Whether a worker process on this machine is certainly gone. Only "certainly" counts: a process
 * that is alive but frozen (SIGSTOP, a stalled event loop) is the heartbeat timeout's to judge, and
 * a process this one cannot see (another host, another boot of the kernel, another PID namespace)
 * is never called gone. The host name alone does not tell machines apart (containers on two hosts
 * may share one): the kernel's boot id does, so two machines that share a folder of records never
 * judge each other's PIDs.
 */
import { readFileSync, readlinkSync } from 'node:fs';
import { hostname } from 'node:os';

/** What a worker writes about itself, so that another process can tell later whether it still runs. */
export interface ProcessIdentity {
  pid: number;
  host: string;
  /** The PID namespace (Linux: /proc/self/ns/pid): a PID means nothing across two of them. */
  pidNamespace: string | null;
  /** The kernel's start time of the process (Linux: /proc/<pid>/stat, field 22): tells a reused PID from the original. */
  startTicks: string | null;
  /**
   * The kernel's boot id (Linux: /proc/sys/kernel/random/boot_id), random at each boot and the same
   * for every container on the machine: only a record with this machine's boot id is judged. Absent
   * in the records of versions before it: such a record is never judged (the heartbeat timeout is).
   */
  bootId?: string | null;
}

/** This machine's boot id, read once (it cannot change while this process runs). */
let bootIdHere: string | null | undefined;
export function bootId(): string | null {
  if (bootIdHere === undefined) bootIdHere = readOrNull(() => readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim()) || null;
  return bootIdHere;
}

function readOrNull(read: () => string): string | null {
  try {
    return read();
  } catch {
    return null;
  }
}

/** Fields 3 (state) and 22 (start time) of /proc/<pid>/stat; the command name (field 2) is in parentheses and may hold spaces. */
function statOf(pid: number): { state: string; startTicks: string } | null {
  const stat = readOrNull(() => readFileSync(`/proc/${pid}/stat`, 'utf8'));
  if (stat === null) return null;
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const [state, startTicks] = [fields[0], fields[19]];
  return state && startTicks ? { state, startTicks } : null;
}

export function currentProcess(): ProcessIdentity {
  return {
    pid: process.pid,
    host: hostname(),
    pidNamespace: readOrNull(() => readlinkSync('/proc/self/ns/pid')),
    startTicks: statOf(process.pid)?.startTicks ?? null,
    bootId: bootId(),
  };
}

export function isProcessIdentity(value: unknown): value is ProcessIdentity {
  const v = value as ProcessIdentity;
  return (
    typeof v === 'object' &&
    v !== null &&
    Number.isSafeInteger(v.pid) &&
    v.pid > 0 &&
    typeof v.host === 'string' &&
    (v.pidNamespace === null || typeof v.pidNamespace === 'string') &&
    (v.startTicks === null || typeof v.startTicks === 'string') &&
    (v.bootId === undefined || v.bootId === null || typeof v.bootId === 'string')
  );
}

/**
 * True only when `other` ran on this host, in this boot of its kernel (its boot id is this one's), in
 * this PID namespace, and its PID is now free or taken by a process that started at another time.
 * False when it may still run, or when this process cannot tell (a record without a boot id, from
 * a version before it, included).
 */
export function processGone(other: ProcessIdentity, here: ProcessIdentity = currentProcess()): boolean {
  if (other.host !== here.host || other.pidNamespace !== here.pidNamespace) return false;
  if (other.bootId === undefined || other.bootId !== here.bootId) return false;
  try {
    process.kill(other.pid, 0);
  } catch (err) {
    // EPERM: a process of another user holds the PID, so it exists (possibly a reused PID; the
    // start time below cannot be read then either): not certain.
    return (err as NodeJS.ErrnoException).code === 'ESRCH';
  }
  if (other.startTicks === null) return false;
  const now = statOf(other.pid);
  if (now === null) return false;
  // A zombie (killed, not yet reaped by its parent) still holds its PID but runs nothing.
  return now.startTicks !== other.startTicks || now.state === 'Z' || now.state === 'X';
}
