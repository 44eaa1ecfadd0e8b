"""PROVE's servers, rows and reward in other frameworks' terms: ``prove.integrations.turn`` is the core
(one row's live episode, its calls, its score); each adapter module (``openenv``, ``skyrl``,
``verifiers``) wraps it in one framework's environment class and is installed by that framework's
extra (README, "Ecosystem")."""
