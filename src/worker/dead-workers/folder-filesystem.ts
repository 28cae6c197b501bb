/**
 * The records of running calls must sit on a filesystem of this machine. On a network filesystem
 * (NFS, SMB, sshfs, CephFS...) workers of several machines would share one folder: a PID read
 * there names a process of whichever machine wrote it, and the file operations the watch relies on
 * (a rename that exactly one watcher wins, a file visible as soon as it is written) are not
 * guaranteed. Such a folder is refused at worker start. Linux only: the folder's mount is found in
 * /proc/mounts (the longest mount point holding the folder's real path, the last one mounted there);
 * elsewhere nothing is checked (the boot id in each record still keeps machines apart where it can be read).
 */
import { existsSync, readFileSync, realpathSync } from 'node:fs';
import path from 'node:path';
import { DurableAgentError } from '../../errors/durable-agent-error';

/** Filesystem types (as /proc/mounts names them) whose files other machines may share. */
export const NETWORK_FILESYSTEMS: ReadonlySet<string> = new Set([
  'nfs',
  'nfs4',
  'cifs',
  'smb',
  'smb3',
  'smbfs',
  '9p',
  'fuse.sshfs',
  'sshfs',
  'ceph',
  'fuse.ceph',
  'fuse.ceph-fuse',
  'glusterfs',
  'fuse.glusterfs',
  'lustre',
  'gpfs',
  'beegfs',
  'ocfs2',
  'gfs2',
  'afs',
  'openafs',
  'coda',
  'ncpfs',
  'davfs',
  'fuse.davfs2',
  'fuse.s3fs',
  'fuse.gcsfuse',
  'fuse.rclone',
  'fuse.juicefs',
  'fuse.goofys',
  'orangefs',
  'pvfs2',
  'cvmfs',
]);

export function isNetworkFilesystem(type: string): boolean {
  return NETWORK_FILESYSTEMS.has(type) || /^nfs\d*$/.test(type);
}

export interface Mount {
  source: string;
  point: string;
  type: string;
}

/** /proc/mounts: `source point type options dump pass` a line, with space, tab, newline and backslash as octal escapes. */
export function parseMounts(table: string): Mount[] {
  const unescape = (field: string) => field.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(Number.parseInt(octal, 8)));
  return table.split('\n').flatMap((line) => {
    const [source, point, type] = line.trim().split(/\s+/);
    return source && point?.startsWith('/') && type ? [{ source: unescape(source), point: unescape(point), type }] : [];
  });
}

/** The mount holding `file` (an absolute, real path): the longest mount point that is it or one of its folders; of several at one point, the last (it hides the others). */
export function mountOf(file: string, mounts: readonly Mount[]): Mount | undefined {
  let found: Mount | undefined;
  for (const mount of mounts) {
    const point = mount.point.length > 1 ? mount.point.replace(/\/+$/, '') : mount.point;
    const holds = point === '/' || file === point || file.startsWith(`${point}/`);
    if (holds && (!found || point.length >= found.point.replace(/\/+$/, '').length)) found = mount;
  }
  return found;
}

/** The real path of `dir`, or of its nearest folder that exists (the folder may not have been made yet). */
function realPathOf(dir: string): string {
  let at = path.resolve(dir);
  let rest = '';
  while (!existsSync(at) && path.dirname(at) !== at) {
    rest = path.join(path.basename(at), rest);
    at = path.dirname(at);
  }
  try {
    return path.join(realpathSync(at), rest);
  } catch {
    return path.resolve(dir);
  }
}

/** The machine's mount table, or undefined where there is none to read (not Linux). */
export function readMountTable(): string | undefined {
  try {
    return readFileSync('/proc/mounts', 'utf8');
  } catch {
    return undefined;
  }
}

/** The records' folder is on a filesystem other machines share. */
export class NetworkRecordsFolderError extends DurableAgentError {
  readonly code = 'workers_dir_on_network_filesystem';
}

/**
 * Throws NetworkRecordsFolderError (one line, naming the filesystem type and the fix) when `dir` is
 * on a network filesystem according to `table` (/proc/mounts' text; undefined: nothing is checked).
 */
export function refuseNetworkFolder(dir: string, table: string | undefined = readMountTable()): void {
  if (table === undefined) return;
  const real = realPathOf(dir);
  const mount = mountOf(real, parseMounts(table));
  if (!mount || !isNetworkFilesystem(mount.type)) return;
  // One line whatever the paths hold.
  const shown = (text: string) => text.replace(/[\u0000-\u001f\u007f]/g, '?');
  throw new NetworkRecordsFolderError(
    `the dead-worker records folder ${shown(dir)} is on a network filesystem (${shown(mount.type)}, ${shown(mount.source)} mounted at ${shown(mount.point)}), which several machines may share: set DURABLE_AGENT_WORKERS_DIR (or deadWorkers.dir) to a local folder, or turn the watch off with DURABLE_AGENT_DEAD_WORKERS=0`,
  );
}
