(* Rig_remote's jobs over another machine, a `rig serve` on a loopback port,
   and this host; then the machine killed (SIGKILL): which steps a job
   loses and which run. Also host_of and capability on that machine. Skips,
   saying why, where RIG_EXE or the remote driver is absent. *)
open Check

external machine_names : nativeint -> string array = "rig_test_remote_machine_names"

let bytes b n =
  let s = Bytes.create n in
  Rig.Buffer.blit_to_bytes b 0 s 0 n;
  Bytes.to_string s

let () =
  let pid, address, key = Serve.start () in
  (* The default hang bound: the machine's list opens every device there,
     which a loaded machine may take seconds to do; the killed server's
     connection ends at once, which loses the machine without the bound. *)
  let h = Serve.open_host ~machine:"jm1" (Rig_edge.remote ~key_file:key address) in
  let a = Result.get_ok (Rig.open_ ~machine:h (Rig_edge.plugin "memory:a")) in
  check "host_of the machine's host" (Rig.host_of h == h);
  check "host_of its device" (Rig.host_of a == h);
  let names k = Rig.capability h (Rig_edge.capability k machine_names) in
  (match names "remote.machine" with
  | Some n -> check "the machine's list starts with its host" (Array.length n > 0 && n.(0) = "CPU")
  | None -> check "the machine's record" false);
  check "no such key" (names "remote.none" = None);
  check "a device not its host declares none" (Rig.capability a (Rig_edge.c_record "remote.machine") = None);
  (* A fill there, its copy here and back there. *)
  let x = Rig.Buffer.create a 8 and y = Rig.Buffer.create a 8 and here = Rig.Buffer.create Rig.host 8 in
  let j = Rig_remote.make () in
  let s0 = Rig_remote.add j Rig.Submission.(make a [| fill 0 0x5a |]) [| x |] in
  let s1 = Rig_remote.add_copy j ~src:x ~dst:here in
  let s2 = Rig_remote.add_copy j ~src:here ~dst:y in
  check "the job runs" (Rig_remote.run j = Ok ());
  check "its bytes here" (bytes here 8 = String.make 8 'Z');
  check "and there" (bytes y 8 = String.make 8 'Z');
  let reached i = match Rig_remote.step j i with Rig_remote.Reached _ -> true | _ -> false in
  check "every step reached" (reached s0 && reached s1 && reached s2);
  (* The machine dies: a new job's steps there are lost, this host's run. *)
  Unix.kill pid Sys.sigkill;
  ignore (Unix.waitpid [] pid);
  let m = Result.get_ok (Rig.memory_device "jobs-local") in
  let local = Rig.Buffer.create m 8 and back = Rig.Buffer.create Rig.host 8 in
  let k = Rig_remote.make () in
  let t0 = Rig_remote.add k Rig.Submission.(make a [| fill 0 0x41 |]) [| x |] in
  let t1 = Rig_remote.add k Rig.Submission.(make m [| fill 0 0x42 |]) [| local |] in
  let t2 = Rig_remote.add_copy k ~src:x ~dst:back in
  (match Rig_remote.run k with
  | Error lost ->
      check "the steps on the lost machine" (List.map fst lost = [ t0; t2 ]);
      check "each says why" (List.for_all (fun (_, why) -> why <> "") lost)
  | Ok () -> check "a lost machine's steps" false);
  check "this machine's step ran" ((match Rig_remote.step k t1 with Rig_remote.Reached _ -> true | _ -> false) && bytes local 8 = String.make 8 'B');
  (match Rig_remote.step j s0 with
  | Rig_remote.Lost _ -> check "a reached step whose result was there is lost" true
  | _ -> check "a reached step whose result was there is lost" false);
  check "a step whose result is here keeps it" (reached s1 && bytes here 8 = String.make 8 'Z');
  check "host_of a lost machine's device" (Rig.host_of a == h && Rig.lost h <> None);
  Rig.close m;
  finish "test_jobs"
