import { intOption, parse } from '../args';
import { VERB_ARGS } from '../verb-args';
import { startLocalStack } from '../local-stack';
import { describeQueues } from '../render';
import { localServerPort, webUiPort } from '../local-port';
import path from 'node:path';
import { DEMO_SCRIPT } from '../../demo/demo-agent';

/**
 * The command that starts a demo task, with the demo's script where this install has it: src/demo/
 * in a checkout, node_modules/durable-agent/dist/demo/ in an app (relative to where the user stands).
 */
export function demoStartLine(cwd: string = process.cwd(), script: string = DEMO_SCRIPT): string {
  const relative = path.relative(cwd, script);
  const shown = relative && !path.isAbsolute(relative) ? relative.split(path.sep).join('/') : script;
  const quoted = /^[\w./@:-]+$/.test(shown) ? shown : `'${shown.replace(/'/g, `'\\''`)}'`;
  return `npx durable-agent start "Summarise C-9921's shipped orders" --agent demo --script ${quoted} --watch`;
}

export const devHelp = `durable-agent dev [--port 7233] [--ui-port 8233 | --headless] [--reuse] [--task-queue Q] [--workspace DIR]
                 [--orders-fault KIND[:N]]...
  Starts the embedded Temporal dev server (state kept in .durable-agent/temporal.db) and a worker,
  and runs until Ctrl-C. Without --port: the port of TEMPORAL_ADDRESS when it names this machine
  (where the other commands connect), else 7233; the Web UI on --ui-port, default the port + 1000.
  A port that already holds a server dev did not start is refused (exit 1), unless --reuse: then dev
  serves its worker on that server (waiting up to 30 s, DURABLE_AGENT_SERVER_WAIT, for one that is
  still starting; exit 4 if it never answers) and leaves it running. Choosing ports: README "Ports".
  The worker's SDK logs go to .durable-agent/logs/ (a file per run); --verbose shows them on stderr too.
  The worker serves the demo agent on its queue durable-agent.demo alone (--task-queue Q: on Q), in a
  deployment of its own, durable-agent-dev, whose current build it becomes; your own
  \`durable-agent worker --agents FILE\` beside it stays in deployment durable-agent and gets its tasks
  (docs/own-agents.md).
  See README.md ("Ports").`;

export async function devCommand(argv: string[]): Promise<number> {
  const { values } = parse(argv, VERB_ARGS.dev.options, VERB_ARGS.dev.positionals);
  const port = intOption(values.port, 'port') ?? localServerPort();
  const uiPort = webUiPort(values, port);
  const log = (line: string) => console.error(line);
  const stack = await startLocalStack({
    port,
    uiPort,
    reuse: !!values.reuse,
    ...(values['task-queue'] ? { taskQueue: values['task-queue'] } : {}),
    ...(values.workspace ? { workspaceDir: values.workspace } : {}),
    ...(values['orders-fault'] ? { faults: values['orders-fault'] } : {}),
    log,
  });
  log(
    [
      stack.reused
        ? `Ready. Temporal ${stack.address} (reused: a server was already running on port ${port}; dev did not start one and leaves it running)`
        : `Ready. Temporal ${stack.address}${stack.server?.uiUrl ? `, Web UI ${stack.server.uiUrl}` : ''}`,
      `Worker: ${describeQueues(stack.worker.queues)}; workspace ${stack.env.workspaceDir}`,
      ...(stack.worker.version
        ? [`Worker: deployment ${stack.worker.version.deploymentName}, build ${stack.worker.version.buildId} (your own worker --agents FILE joins deployment durable-agent: docs/own-agents.md)`]
        : []),
      'In another terminal:',
      `  ${demoStartLine()}`,
      '  npx durable-agent list',
      stack.reused
        ? 'Ctrl-C stops the worker (in-flight work is drained); the server keeps running, and tasks resume on the next start.'
        : 'Ctrl-C stops the worker (in-flight work is drained) and the server; tasks resume on the next start.',
    ].join('\n'),
  );
  await stack.running;
  await stack.stop();
  log('Stopped.');
  return 0;
}
