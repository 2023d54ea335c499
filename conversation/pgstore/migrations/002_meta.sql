-- An application's own record of each conversation (the agent server's
-- meta.json), kept beside the base state.
ALTER TABLE gohands_conversations ADD COLUMN meta text;
CREATE INDEX gohands_conversations_orphans ON gohands_conversations (lease_until) WHERE owner IS NOT NULL;
