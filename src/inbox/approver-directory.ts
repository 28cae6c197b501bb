/**
 * Who may sign in to the inbox: a JSON file of approvers with hashed secrets, e.g.
 *
 *   { "approvers": [ { "id": "ana", "name": "Ana Lima", "roles": ["ops"],
 *                      "password": "scrypt$32768$8$1$...", "tokens": ["sha256$..."] } ] }
 *
 * Default path `<state dir>/approvers.json`. Hashes come from `durable-agent inbox hash-password`.
 * The file never holds a secret in clear, so it can live in a config repository.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { stateDir } from '../server/state-dir';
import { hashPassword, tokenMatches, verifyPassword } from './secret-hash';
import { DurableAgentError } from '../errors/durable-agent-error';

export interface Approver {
  id: string;
  name: string;
  roles: string[];
}

interface ApproverEntry extends Approver {
  password?: string;
  tokens: string[];
}

export class ApproverFileError extends DurableAgentError {
  readonly code = 'approver_file_invalid';
}

export function defaultApproversFile(): string {
  return path.join(stateDir(), 'approvers.json');
}

const ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._@+-]{0,127}$/;

export class ApproverDirectory {
  private readonly byId: Map<string, ApproverEntry>;
  /** Checked when an id is unknown, so an unknown id costs the same scrypt time as a wrong password. */
  private readonly decoy: Promise<string>;

  constructor(entries: ApproverEntry[]) {
    this.byId = new Map(entries.map((e) => [e.id, e]));
    this.decoy = hashPassword('decoy-password-never-matches');
  }

  static fromFile(file: string = defaultApproversFile()): ApproverDirectory {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (err) {
      throw new ApproverFileError(
        `cannot read the approvers file ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}. ` +
          'Create it (see docs/inbox.md) with hashes from `durable-agent inbox hash-password`.',
      );
    }
    return ApproverDirectory.fromJson(text, file);
  }

  static fromJson(text: string, source = 'approvers file'): ApproverDirectory {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (err) {
      throw new ApproverFileError(`${source} is not JSON: ${(err as Error).message}`);
    }
    const list = (parsed as { approvers?: unknown })?.approvers;
    if (!Array.isArray(list)) throw new ApproverFileError(`${source} must be an object with an "approvers" array`);
    const seen = new Set<string>();
    const entries = list.map((raw, i) => {
      const where = `${source}: approvers[${i}]`;
      const e = raw as Record<string, unknown>;
      if (!e || typeof e !== 'object') throw new ApproverFileError(`${where} must be an object`);
      const unknown = Object.keys(e).filter((k) => !['id', 'name', 'roles', 'password', 'tokens'].includes(k));
      if (unknown.length) throw new ApproverFileError(`${where} has unknown field(s) ${unknown.join(', ')} (known: id, name, roles, password, tokens)`);
      if (typeof e.id !== 'string' || !ID_PATTERN.test(e.id)) throw new ApproverFileError(`${where}.id must be 1-128 letters, digits or . _ @ + -`);
      if (seen.has(e.id)) throw new ApproverFileError(`${where}.id "${e.id}" appears twice`);
      seen.add(e.id);
      const roles = e.roles ?? [];
      if (!Array.isArray(roles) || !roles.every((r) => typeof r === 'string' && ID_PATTERN.test(r))) {
        throw new ApproverFileError(`${where}.roles must be a list of role names`);
      }
      if (e.password !== undefined && (typeof e.password !== 'string' || !e.password.startsWith('scrypt$'))) {
        throw new ApproverFileError(`${where}.password must be a scrypt hash from \`durable-agent inbox hash-password\`, never the password itself`);
      }
      const tokens = e.tokens ?? [];
      if (!Array.isArray(tokens) || !tokens.every((t) => typeof t === 'string' && /^sha256\$[0-9a-f]{64}$/.test(t))) {
        throw new ApproverFileError(`${where}.tokens must be a list of sha256$... hashes from \`durable-agent inbox hash-password --token\``);
      }
      const name = e.name === undefined ? e.id : e.name;
      if (typeof name !== 'string' || !name.trim() || name.length > 200) throw new ApproverFileError(`${where}.name must be a short text`);
      return { id: e.id, name, roles: roles as string[], ...(e.password ? { password: e.password as string } : {}), tokens: tokens as string[] };
    });
    return new ApproverDirectory(entries);
  }

  get size(): number {
    return this.byId.size;
  }

  /** The approver with this id (for a trusted proxy's header), without any secret. */
  get(id: string): Approver | undefined {
    const e = this.byId.get(id);
    return e ? publicPart(e) : undefined;
  }

  /** The approver when id and password match; undefined otherwise (same work either way). */
  async signInWithPassword(id: string, password: string): Promise<Approver | undefined> {
    const e = this.byId.get(id);
    const ok = await verifyPassword(password, e?.password ?? (await this.decoy));
    return e?.password && ok ? publicPart(e) : undefined;
  }

  /** The approver who holds this token; every stored token is compared, in constant time each. */
  signInWithToken(token: string): Approver | undefined {
    let found: ApproverEntry | undefined;
    for (const e of this.byId.values()) for (const t of e.tokens) if (tokenMatches(token, t)) found = e;
    return found ? publicPart(found) : undefined;
  }
}

function publicPart(e: ApproverEntry): Approver {
  return { id: e.id, name: e.name, roles: [...e.roles] };
}
