"""How answers go out: the Slack and JIRA clients, a channel per chat surface, and the formatting each wants
(Slack mrkdwn, Atlassian documents). Below the service that uses them and the tools that reach Slack and JIRA."""
