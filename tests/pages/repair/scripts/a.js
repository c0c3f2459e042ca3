var s_att = { events: ['a'] };
