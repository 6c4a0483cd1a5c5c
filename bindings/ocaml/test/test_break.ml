(* Sys.Break interrupts a wait: a wait on the test device's work that never
   finishes (hang_nth=1) ends with Sys.Break once SIGINT comes, through the
   wait hook, having lost nothing; the runtime lock is released meanwhile,
   so another thread runs. The helper threads block SIGINT: OCaml runs a
   signal's handler on whichever thread polls first, and the test's Ctrl-C
   is the waiting thread's. *)
open Check

let () =
  match Rig.open_ (Rig_edge.plugin "test:81,hang_nth=1") with
  | Error why -> skip ("no test driver: " ^ why)
  | Ok d ->
      Sys.catch_break true;
      let b = Rig.Buffer.create d 64 in
      let p = Rig.Buffer.submit_fill b 0 in
      let ticks = ref 0 in
      let stop = ref false in
      let ticker =
        Thread.create
          (fun () ->
            ignore (Thread.sigmask Unix.SIG_BLOCK [ Sys.sigint ]);
            while not !stop do
              incr ticks;
              Thread.delay 0.01
            done)
          ()
      in
      let killer =
        Thread.create
          (fun () ->
            ignore (Thread.sigmask Unix.SIG_BLOCK [ Sys.sigint ]);
            Thread.delay 0.5;
            Unix.kill (Unix.getpid ()) Sys.sigint)
          ()
      in
      (match Rig.Point.wait p with
      | () -> check "the wait ends with Sys.Break" false
      | exception Sys.Break -> check "the wait ends with Sys.Break" true);
      stop := true;
      Thread.join killer;
      Thread.join ticker;
      check "other threads ran during the wait" (!ticks > 5);
      check "the device is not lost" (Rig.lost d = None);
      check "the point is not reached" (not (Rig.Point.reached p));
      finish "test_break"
