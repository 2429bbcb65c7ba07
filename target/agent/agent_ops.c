/* The agent engine's entry in the tracer's engine interface
 * (target/tracer/engine_ops.h). */
#include "target/agent/agent.h"

static bool agent_preferred(void)
{
    return agent_default_engine() == ENGINE_AGENT;
}

const struct engine_ops engine_agent = {
    .name = "agent",
    .built = agent_engine_built,
    .preferred = agent_preferred,
    .name_of = agent_engine_name,
    .start = agent_start,
    .patch_module = agent_patch_module,
    .module_gone = agent_module_gone,
    .modules_reread = agent_rows_clear,
    .drain = agent_drain,
    .poll_fd = agent_poll_fd,
    .poll_timeout = agent_poll_timeout,
    .doorbell = agent_doorbell,
    .thread_exit = agent_thread_exit,
    .stop = agent_stop,
    .forget = agent_forget,
    .free = agent_free,
    .release_child = agent_release_child,
    .fork_settle = agent_fork_settle,
    .fork_child = agent_fork_child,
    .get_stats = agent_get_stats,
    .own_ranges = agent_own_ranges,
};
