-- A release that follows a `released` entry of the same life updates that entry instead of adding
-- one (issue 31: a claim/release loop grew one history to 18,778 entries). `count` is how many
-- releases an entry stands for; every other entry, and every entry stored before 010, has 1.
ALTER TABLE attempts ADD COLUMN count INTEGER NOT NULL DEFAULT 1;
