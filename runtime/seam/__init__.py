"""What the working modules (graph, loop, call) know of a session: the `SessionEnv` Protocol
(`seams`), the dataclasses a session is made of (`state`) and the indexes over its evidence
(`indexes`: by tool, by entity). Nothing here imports the working modules.
"""
