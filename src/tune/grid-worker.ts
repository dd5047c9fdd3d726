import { parentPort } from 'worker_threads';
import { runJob, type Job } from './jobs';

/** A what-if thread: one job per message (tune/threads starts it). */
parentPort?.on('message', (job: Job) => runJob(job, (reply) => parentPort?.postMessage(reply)));
