export { createActivities, type ActivityDependencies } from './agent-activities';
