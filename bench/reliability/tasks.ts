/**
 * The suite: about 20 tasks in the style of tau-bench's retail domain, on the store of
 * store-tools.ts. Each task is a scripted model trajectory (the tool calls a model makes, in order,
 * some of whose arguments it computes from earlier answers, then its final answer) and the store's
 * expected final state: the changes the task must leave, every other order untouched.
 *
 * The trajectory is served by the strict fake Messages API (trajectory-model.ts) to whichever engine
 * runs the task, through the real Anthropic SDK. The model behaves like a careful one: it reads each
 * answer, and an answer that is an error, not JSON, or lacks the fields it needs (a renamed field,
 * a truncated body) makes it call the same tool again with the same arguments (up to
 * MAX_ATTEMPTS_PER_STEP), as models do; it takes an empty page at its word.
 */
import type { Address, OrderStatus, StoreSnapshot } from '../../src/testing/orders-service';
import { DELEGATE_TOOL, type StoreToolName } from './store-tools';

/** What a step's input may be computed from: the answers of the earlier steps of its trajectory, in order. */
export type Answers = any[];

export interface Step {
  tool: StoreToolName | typeof DELEGATE_TOOL;
  /** The arguments, or how the model computes them from earlier answers (throws: it cannot, and gives up). */
  input: Record<string, unknown> | ((answers: Answers) => Record<string, unknown>);
  /** What the model needs in the answer to go on. Default: per tool (defaultCheck). */
  check?: (answer: any) => boolean;
}

export interface Trajectory {
  /** Tags the prompt (`[task KEY]`) so the fake API knows which trajectory a conversation follows. */
  key: string;
  prompt: string;
  steps: Step[];
  answer: string | ((answers: Answers) => string);
}

export interface OrderChange {
  status?: OrderStatus;
  address?: Address;
  refunded_cents?: number;
}

export interface ReliabilityTask {
  id: string;
  title: string;
  /** `lead`: the task may delegate to the store clerk (a sub-agent). */
  agent: 'store' | 'lead';
  trajectory: Trajectory;
  /** The clerk's trajectories, found by the key in the delegated task's text. */
  subtasks?: Trajectory[];
  /** Order id -> what it must be at the end; every other order as it started. */
  expected: Record<string, OrderChange>;
  /** Some call needs a person's approval (cancel_order). */
  approval?: boolean;
  /** 100+ turns of ~10 KB answers. */
  long?: boolean;
}

export const MAX_ATTEMPTS_PER_STEP = 4;

/** The expected final state: the initial snapshot with the task's changes. */
export function expectedSnapshot(initial: StoreSnapshot, task: ReliabilityTask): StoreSnapshot {
  return { orders: initial.orders.map((o) => ({ ...o, ...task.expected[o.id] })) };
}

/** Default: what a model needs of each tool's answer to go on. */
export function defaultCheck(tool: Step['tool'], input: Record<string, unknown>, answer: any): boolean {
  if (answer === null || typeof answer !== 'object') return tool === DELEGATE_TOOL && typeof answer === 'string' && answer.length > 0;
  switch (tool) {
    case 'search_orders':
      return Array.isArray(answer.orders) && answer.orders.every((o: any) => typeof o.total_cents === 'number' && typeof o.status === 'string');
    case 'get_order':
      return typeof answer.status === 'string' && typeof answer.total_cents === 'number';
    case 'read_ledger':
      return Array.isArray(answer.entries);
    case 'refund_order':
    case 'cancel_order':
    case 'change_address':
      return answer.order_id === input.order_id;
    case DELEGATE_TOOL:
      return true;
  }
}

// Steps, as a model would write them.
const search = (customer_id: string, page = 1): Step => ({ tool: 'search_orders', input: { customer_id, page } });
const get = (order_id: string): Step => ({ tool: 'get_order', input: { order_id } });
const refund = (order_id: string, amount: number | ((a: Answers) => number), reason = 'customer request'): Step => ({
  tool: 'refund_order',
  input: typeof amount === 'number' ? { order_id, amount_cents: amount, reason } : (a) => ({ order_id, amount_cents: amount(a), reason }),
});
const cancel = (order_id: string, reason = 'customer asked'): Step => ({ tool: 'cancel_order', input: { order_id, reason } });
const moveTo = (order_id: string, address: Address): Step => ({ tool: 'change_address', input: { order_id, address } });
const ledger = (page: number): Step => ({ tool: 'read_ledger', input: { page } });
const delegate = (key: string, text: string): Step => ({ tool: DELEGATE_TOOL, input: { task: `[task ${key}] ${text}` } });

/** Orders of every page read so far (the answers of search steps). */
const ordersSeen = (a: Answers): { id: string; total_cents: number; status: string }[] => a.filter((x) => Array.isArray(x?.orders)).flatMap((x) => x.orders);
const mostExpensive = (a: Answers, status: string) => {
  const found = ordersSeen(a).filter((o) => o.status === status);
  if (!found.length) throw new Error(`no ${status} order seen`);
  return found.reduce((m, o) => (o.total_cents > m.total_cents ? o : m));
};
/** The last get_order answer's total. */
const lastTotal = (a: Answers): number => [...a].reverse().find((x) => typeof x?.total_cents === 'number' && 'refunded_cents' in x).total_cents;

const ELM = { line1: '9 Elm St', city: 'Shelbyville', zip: '20002' };
const OAK = { line1: '41 Oak Ave', city: 'Capital City', zip: '30003' };
const PINE = { line1: '7 Pine Rd', city: 'Ogdenville', zip: '40004' };

function task(t: Omit<ReliabilityTask, 'trajectory'> & { prompt: string; steps: Step[]; answer: Trajectory['answer'] }): ReliabilityTask {
  const { prompt, steps, answer, ...rest } = t;
  return { ...rest, trajectory: { key: t.id, prompt: `[task ${t.id}] ${prompt}`, steps, answer } };
}

const sub = (key: string, steps: Step[], answer: string): Trajectory => ({ key, prompt: '', steps, answer });

/** The clerk's trajectories (sub-agent tasks), keyed `<task>-<name>`. */
const SUBTASKS: Trajectory[] = [
  sub('t07-clerk', [get('O-0013'), refund('O-0013', 1_000, 'goodwill')], 'Refunded 1000 cents of O-0013.'),
  sub('t08-clerk', [moveTo('O-0012', PINE)], 'O-0012 now ships to 7 Pine Rd.'),
  sub('t13-a', [refund('O-0003', 2_000, 'late delivery')], 'Refunded 2000 cents of O-0003.'),
  sub('t13-b', [refund('O-0010', 3_000, 'late delivery')], 'Refunded 3000 cents of O-0010.'),
];

export const TASKS: ReliabilityTask[] = [
  task({
    id: 't01',
    title: 'full refund of the most expensive delivered order (two pages)',
    agent: 'store',
    prompt: 'Customer C-1003 wants a full refund of their most expensive delivered order.',
    steps: [
      search('C-1003', 1),
      search('C-1003', 2),
      { tool: 'refund_order', input: (a) => ({ order_id: mostExpensive(a, 'delivered').id, amount_cents: mostExpensive(a, 'delivered').total_cents, reason: 'full refund' }) },
    ],
    answer: 'Refunded the most expensive delivered order of C-1003 in full.',
    expected: { 'O-0015': { refunded_cents: 30_785 } },
  }),
  task({
    id: 't02',
    title: 'cancel a placed order (approval)',
    agent: 'store',
    approval: true,
    prompt: 'Customer C-1004 asks to cancel order O-0004.',
    steps: [get('O-0004'), cancel('O-0004')],
    answer: 'Order O-0004 is cancelled.',
    expected: { 'O-0004': { status: 'cancelled' } },
  }),
  task({
    id: 't03',
    title: 'change the address of the unshipped order',
    agent: 'store',
    prompt: 'Customer C-1002 moved to 9 Elm St, Shelbyville 20002: change the address of their unshipped order.',
    steps: [
      search('C-1002', 1),
      search('C-1002', 2),
      {
        tool: 'change_address',
        input: (a) => {
          const placed = ordersSeen(a).find((o) => o.status === 'placed');
          if (!placed) throw new Error('no placed order seen');
          return { order_id: placed.id, address: ELM };
        },
      },
    ],
    answer: 'The unshipped order of C-1002 now ships to 9 Elm St.',
    expected: { 'O-0014': { address: ELM } },
  }),
  task({
    id: 't04',
    title: 'refund 20% of a damaged order',
    agent: 'store',
    prompt: 'Order O-0008 arrived damaged: refund 20% of its total.',
    steps: [get('O-0008'), refund('O-0008', (a) => Math.floor(lastTotal(a) * 0.2), 'arrived damaged')],
    answer: 'Refunded 20% of O-0008.',
    expected: { 'O-0008': { refunded_cents: 1_070 } },
  }),
  task({
    id: 't05',
    title: 'half refund and an address change for one customer',
    agent: 'store',
    prompt: 'Customer C-1005: refund half of delivered order O-0005, and ship their placed order O-0017 to 41 Oak Ave, Capital City 30003.',
    steps: [get('O-0005'), refund('O-0005', (a) => Math.floor(lastTotal(a) / 2), 'half refund'), moveTo('O-0017', OAK)],
    answer: 'Refunded half of O-0005; O-0017 ships to 41 Oak Ave.',
    expected: { 'O-0005': { refunded_cents: 5_797 }, 'O-0017': { address: OAK } },
  }),
  task({
    id: 't06',
    title: 'cancel both placed orders (two approvals)',
    agent: 'store',
    approval: true,
    prompt: 'Customer C-1004 closes their account: cancel every order of theirs that has not shipped.',
    steps: [search('C-1004', 1), search('C-1004', 2), cancel('O-0004', 'account closed'), cancel('O-0022', 'account closed')],
    answer: 'Cancelled O-0004 and O-0022.',
    expected: { 'O-0004': { status: 'cancelled' }, 'O-0022': { status: 'cancelled' } },
  }),
  task({
    id: 't07',
    title: 'delegate a refund to the clerk (sub-agent)',
    agent: 'lead',
    prompt: 'Refund 1000 cents of order O-0013 as a goodwill gesture; let the store clerk do it.',
    steps: [delegate('t07-clerk', 'Check order O-0013, then refund 1000 cents of it (goodwill).')],
    answer: 'The clerk refunded 1000 cents of O-0013.',
    expected: { 'O-0013': { refunded_cents: 1_000 } },
  }),
  task({
    id: 't08',
    title: 'delegate an address change, then verify it (sub-agent)',
    agent: 'lead',
    prompt: 'Customer C-1006 moved to 7 Pine Rd, Ogdenville 40004: have the clerk update their placed order, then check it.',
    steps: [search('C-1006', 1), delegate('t08-clerk', 'Change the address of order O-0012 to 7 Pine Rd, Ogdenville 40004.'), get('O-0012')],
    answer: 'O-0012 now ships to 7 Pine Rd.',
    expected: { 'O-0012': { address: PINE } },
  }),
  task({
    id: 't09',
    title: 'read-only: the refunds of a customer (no change)',
    agent: 'store',
    prompt: 'How much has customer C-1001 been refunded so far, across their orders O-0001, O-0007, O-0013 and O-0019?',
    steps: [get('O-0001'), get('O-0007'), get('O-0013'), get('O-0019')],
    answer: (a) => `C-1001 has been refunded ${a.reduce((s, x) => s + (x.refunded_cents ?? 0), 0)} cents.`,
    expected: {},
  }),
  task({
    id: 't10',
    title: 'refund every delivered order of a customer',
    agent: 'store',
    prompt: 'Customer C-1002 returned everything that was delivered: refund those orders in full.',
    steps: [search('C-1002', 1), search('C-1002', 2), fullRefundOf('O-0008'), fullRefundOf('O-0020')],
    answer: 'Refunded O-0008 and O-0020 in full.',
    expected: { 'O-0008': { refunded_cents: 5_352 }, 'O-0020': { refunded_cents: 10_380 } },
  }),
  task({
    id: 't11',
    title: 'a shipped order cannot be cancelled: goodwill refund instead',
    agent: 'store',
    prompt: 'Customer C-1005 wants to cancel O-0023. If it has shipped already, refund 500 cents of goodwill instead.',
    steps: [get('O-0023'), refund('O-0023', 500, 'goodwill: already shipped')],
    answer: 'O-0023 had shipped; refunded 500 cents of goodwill.',
    expected: { 'O-0023': { refunded_cents: 500 } },
  }),
  task({
    id: 't12',
    title: 'an address change and a cancellation (approval)',
    agent: 'store',
    approval: true,
    prompt: 'Customer C-1001: ship O-0001 to 9 Elm St, Shelbyville 20002, and cancel O-0019.',
    steps: [moveTo('O-0001', ELM), get('O-0019'), cancel('O-0019')],
    answer: 'O-0001 ships to 9 Elm St; O-0019 is cancelled.',
    expected: { 'O-0001': { address: ELM }, 'O-0019': { status: 'cancelled' } },
  }),
  task({
    id: 't13',
    title: 'two refunds delegated to two clerks (sub-agents)',
    agent: 'lead',
    prompt: 'Refund 2000 cents of O-0003 and 3000 cents of O-0010 (late deliveries); give each to the store clerk.',
    steps: [delegate('t13-a', 'Refund 2000 cents of order O-0003 (late delivery).'), delegate('t13-b', 'Refund 3000 cents of order O-0010 (late delivery).')],
    answer: 'Both refunds are done.',
    expected: { 'O-0003': { refunded_cents: 2_000 }, 'O-0010': { refunded_cents: 3_000 } },
  }),
  task({
    id: 't14',
    title: 'a shipping fee back on delivered orders of two customers',
    agent: 'store',
    prompt: 'Refund the 799-cent shipping fee on the most expensive delivered order of C-1004 and of C-1006.',
    steps: [
      search('C-1004', 1),
      search('C-1004', 2),
      { tool: 'refund_order', input: (a) => ({ order_id: mostExpensive(a, 'delivered').id, amount_cents: 799, reason: 'shipping fee' }) },
      search('C-1006', 1),
      search('C-1006', 2),
      { tool: 'refund_order', input: (a) => ({ order_id: mostExpensive(a.slice(3), 'delivered').id, amount_cents: 799, reason: 'shipping fee' }) },
    ],
    answer: 'Refunded the shipping fee on O-0010 and O-0024.',
    expected: { 'O-0010': { refunded_cents: 799 }, 'O-0024': { refunded_cents: 799 } },
  }),
  task({
    id: 't15',
    title: 'change an address and check it took',
    agent: 'store',
    prompt: 'Ship O-0022 to 41 Oak Ave, Capital City 30003, and confirm the change.',
    steps: [moveTo('O-0022', OAK), { tool: 'get_order', input: { order_id: 'O-0022' }, check: (o) => o?.address?.line1 === OAK.line1 && typeof o.status === 'string' }],
    answer: 'O-0022 ships to 41 Oak Ave (checked).',
    expected: { 'O-0022': { address: OAK } },
  }),
  task({
    id: 't16',
    title: 'cancel one order (approval) and refund another',
    agent: 'store',
    approval: true,
    prompt: 'Customer C-1006: cancel placed order O-0012, and refund 1500 cents of O-0018 for the delay.',
    steps: [cancel('O-0012', 'customer asked'), refund('O-0018', 1_500, 'delay')],
    answer: 'O-0012 cancelled; 1500 cents of O-0018 refunded.',
    expected: { 'O-0012': { status: 'cancelled' }, 'O-0018': { refunded_cents: 1_500 } },
  }),
  task({
    id: 't17',
    title: 'three refunds on three customers',
    agent: 'store',
    prompt: 'Refund 1000 cents each of O-0003, O-0005 and O-0013 (a promotion that was not applied).',
    steps: [refund('O-0003', 1_000, 'promotion'), refund('O-0005', 1_000, 'promotion'), refund('O-0013', 1_000, 'promotion')],
    answer: 'Three refunds of 1000 cents done.',
    expected: { 'O-0003': { refunded_cents: 1_000 }, 'O-0005': { refunded_cents: 1_000 }, 'O-0013': { refunded_cents: 1_000 } },
  }),
  task({
    id: 't18',
    title: 'two different refunds on one order',
    agent: 'store',
    prompt: 'Order O-0015: refund 1000 cents for a missing item and 2000 cents for a late delivery, as two refunds.',
    steps: [refund('O-0015', 1_000, 'missing item'), refund('O-0015', 2_000, 'late delivery'), get('O-0015')],
    answer: 'Two refunds on O-0015: 3000 cents in all.',
    expected: { 'O-0015': { refunded_cents: 3_000 } },
  }),
  task({
    id: 't19',
    title: 'long: audit 105 ledger pages, then refund an order in full',
    agent: 'store',
    long: true,
    prompt: 'Audit the ledger page by page (all 105 pages), then refund order O-0020 in full: its total was charged twice.',
    steps: [...Array.from({ length: 105 }, (_, i) => ledger(i + 1)), get('O-0020'), refund('O-0020', (a) => lastTotal(a), 'charged twice')],
    answer: 'Audited 105 pages; refunded O-0020 in full.',
    expected: { 'O-0020': { refunded_cents: 10_380 } },
  }),
  task({
    id: 't20',
    title: 'long: audit 110 ledger pages, then change an address',
    agent: 'store',
    long: true,
    prompt: 'Read all 110 ledger pages, then ship O-0017 to 7 Pine Rd, Ogdenville 40004 as the ledger notes say.',
    steps: [...Array.from({ length: 110 }, (_, i) => ledger(i + 1)), moveTo('O-0017', PINE)],
    answer: 'Read 110 pages; O-0017 ships to 7 Pine Rd.',
    expected: { 'O-0017': { address: PINE } },
  }),
].map((t) => (t.agent === 'lead' ? { ...t, subtasks: SUBTASKS.filter((s) => s.key.startsWith(`${t.id}-`)) } : t));

function fullRefundOf(orderId: string): Step {
  return {
    tool: 'refund_order',
    input: (a) => {
      const seen = ordersSeen(a).find((o) => o.id === orderId);
      if (!seen) throw new Error(`${orderId} not seen`);
      return { order_id: orderId, amount_cents: seen.total_cents, reason: 'returned' };
    },
  };
}

/** The quick variant's five tasks: pagination, an approval, two writes, a sub-agent, two refunds on one order. */
export const QUICK_TASK_IDS = ['t01', 't02', 't05', 't07', 't18'];

/** A trajectory by its key: a task's own, or one of its sub-agent tasks'. */
export function trajectoryByKey(key: string): Trajectory | undefined {
  for (const t of TASKS) {
    if (t.trajectory.key === key) return t.trajectory;
    const found = t.subtasks?.find((s) => s.key === key);
    if (found) return found;
  }
  return undefined;
}
