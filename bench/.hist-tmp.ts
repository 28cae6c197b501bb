import { startHarness } from '../test/support/harness';
import { createBenchAgent, EchoModel } from './bench-agent';

async function main() {
  const h = await startHarness();
  try {
    const model = new EchoModel(10);
    const agent = createBenchAgent();
    const worker = await h.worker([agent], { models: { echo: model } });
    const taskId = h.taskId('hist');
    await worker.runUntil(async () => {
      await h.client.start({ agent: agent.name, prompt: 'go', model: { provider: 'custom', name: 'echo' }, budgets: { turns: 15, toolCalls: 15 } }, { taskId });
      await h.client.result(taskId);
    });
    const hist = await h.client.handle(taskId).fetchHistory();
    for (const e of hist.events ?? []) {
      const attrs = Object.entries(e).find(([k, v]) => k.endsWith('Attributes') && v);
      let extra = '';
      if (e.activityTaskScheduledEventAttributes) extra = `${e.activityTaskScheduledEventAttributes.activityType?.name} in=${e.activityTaskScheduledEventAttributes.input?.payloads?.[0]?.data?.length}`;
      if (e.activityTaskCompletedEventAttributes) extra = `out=${e.activityTaskCompletedEventAttributes.result?.payloads?.[0]?.data?.length}`;
      if (e.markerRecordedEventAttributes) extra = e.markerRecordedEventAttributes.markerName ?? '';
      if (e.upsertWorkflowSearchAttributesEventAttributes) extra = Object.keys(e.upsertWorkflowSearchAttributesEventAttributes.searchAttributes?.indexedFields ?? {}).join(',');
      if (e.workflowPropertiesModifiedEventAttributes) extra = Object.keys(e.workflowPropertiesModifiedEventAttributes.upsertedMemo?.fields ?? {}).join(',');
      console.log(e.eventId?.toString(), attrs?.[0]?.replace('EventAttributes', ''), extra);
    }
  } finally {
    await h.close();
  }
}
main().catch((e) => { console.error(e); process.exit(1); });
