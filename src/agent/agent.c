/* placeholder */ typedef int cbn_placeholder_agent;
