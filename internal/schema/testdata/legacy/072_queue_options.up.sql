-- ttl, maxSize and priority now do something (docs/api.md, Queue options).
-- Until now every queue's options held Queen's ttl default of 3600, which
-- nothing enforced; enforcing it now would start hiding messages older
-- than an hour on every queue. A ttl stored so far was never in force, so
-- it is reset to 0 (none), lethe's default: a ttl takes effect only when a
-- configure sets it from now on. maxSize and priority were never set by
-- default (0), so a value stored is one a user asked for, and it holds.
UPDATE lethe.queues SET options = jsonb_set(options, '{ttl}', '0') WHERE options ? 'ttl';
