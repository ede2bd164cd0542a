"""Small input files shared by several test modules."""

SESSION_TRACK_XML = """<sessiontrack2012>
 <session num="1" starttime="10:00:00.000000">
  <topic num="7"><desc>Find things.</desc></topic>
  <interaction num="1" starttime="10:00:05.000000">
   <query>things</query>
   <results>
    <result rank="1"><url>http://a</url><clueweb09id>doc-a</clueweb09id><title>A</title><snippet>a</snippet></result>
    <result rank="2"><url>http://b</url><clueweb09id>doc-b</clueweb09id><title>B</title><snippet>b</snippet></result>
   </results>
   <clicked><click num="1" starttime="10:00:09.000000" endtime="10:00:12.000000"><rank>2</rank></click>\
</clicked>
  </interaction>
  <currentquery starttime="10:01:00.000000"><query>more things</query></currentquery>
 </session>
</sessiontrack2012>
"""
