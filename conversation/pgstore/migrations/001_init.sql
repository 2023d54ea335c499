-- Conversations: base state and lease.
CREATE TABLE gohands_conversations (
    id          uuid PRIMARY KEY,
    base        text,
    owner       text,
    epoch       bigint NOT NULL DEFAULT 0,
    lease_until timestamptz,
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now()
);

-- Events: append-only, the JSON as the reference writes it.
CREATE TABLE gohands_events (
    conversation_id uuid NOT NULL REFERENCES gohands_conversations (id) ON DELETE CASCADE,
    idx             integer NOT NULL,
    id              text NOT NULL,
    kind            text NOT NULL,
    source          text NOT NULL,
    ts              text NOT NULL,
    body            text NOT NULL,
    PRIMARY KEY (conversation_id, idx),
    UNIQUE (conversation_id, id)
);
CREATE INDEX gohands_events_kind ON gohands_events (conversation_id, kind, idx);
