; agentgym built-in ALFWorld game: pick_and_place_simple
; Your task is to: put a peppershaker in drawer.
; A hand-written scene in the problem format of ALFWorld's game.tw-pddl files; it is played
; with the alfred.pddl domain and alfred.twl2 grammar that the alfworld package ships.
(define (problem plan_builtin_pick_and_place_simple)
(:domain alfred)
(:objects
        agent1 - agent
        AppleType - otype
        BreadType - otype
        CupType - otype
        EggType - otype
        KnifeType - otype
        MugType - otype
        PanType - otype
        PepperShakerType - otype
        PlateType - otype
        SaltShakerType - otype
        SpoonType - otype
        TomatoType - otype
        CabinetType - rtype
        CoffeeMachineType - rtype
        CounterTopType - rtype
        DiningTableType - rtype
        DrawerType - rtype
        FridgeType - rtype
        GarbageCanType - rtype
        MicrowaveType - rtype
        SinkBasinType - rtype
        StoveBurnerType - rtype
        Apple_bar__plus_01_dot_15_bar__plus_00_dot_77_bar__plus_00_dot_96 - object
        Bread_bar__minus_01_dot_80_bar__plus_01_dot_01_bar__minus_00_dot_25 - object
        Cup_bar__plus_01_dot_53_bar__plus_00_dot_78_bar__minus_01_dot_59 - object
        Egg_bar__minus_02_dot_02_bar__plus_00_dot_85_bar__plus_01_dot_01 - object
        Knife_bar__plus_01_dot_02_bar__plus_00_dot_93_bar__minus_01_dot_62 - object
        Mug_bar__plus_01_dot_31_bar__plus_00_dot_68_bar__plus_01_dot_14 - object
        Pan_bar__minus_00_dot_10_bar__plus_00_dot_95_bar__minus_01_dot_68 - object
        PepperShaker_bar__minus_01_dot_49_bar__plus_00_dot_42_bar__plus_01_dot_71 - object
        Plate_bar__minus_01_dot_62_bar__plus_00_dot_41_bar__plus_00_dot_70 - object
        SaltShaker_bar__plus_00_dot_71_bar__plus_00_dot_91_bar__minus_01_dot_38 - object
        Spoon_bar__plus_00_dot_99_bar__plus_00_dot_73_bar__minus_01_dot_33 - object
        Tomato_bar__minus_02_dot_15_bar__plus_01_dot_24_bar__plus_01_dot_13 - object
        Cabinet_bar__minus_01_dot_55_bar__plus_00_dot_40_bar__plus_00_dot_62 - receptacle
        Cabinet_bar__minus_01_dot_55_bar__plus_00_dot_40_bar__plus_01_dot_78 - receptacle
        CoffeeMachine_bar__minus_01_dot_98_bar__plus_00_dot_90_bar__minus_00_dot_01 - receptacle
        CounterTop_bar__minus_01_dot_87_bar__plus_00_dot_95_bar__minus_00_dot_31 - receptacle
        CounterTop_bar__plus_00_dot_84_bar__plus_00_dot_95_bar__minus_01_dot_50 - receptacle
        DiningTable_bar__plus_01_dot_20_bar__plus_00_dot_67_bar__plus_01_dot_05 - receptacle
        Drawer_bar__minus_01_dot_61_bar__plus_00_dot_78_bar__minus_00_dot_70 - receptacle
        Drawer_bar__plus_00_dot_95_bar__plus_00_dot_78_bar__minus_01_dot_36 - receptacle
        Fridge_bar__minus_02_dot_10_bar__plus_00_dot_00_bar__plus_01_dot_07 - receptacle
        GarbageCan_bar__plus_02_dot_05_bar__plus_00_dot_00_bar__plus_01_dot_82 - receptacle
        Microwave_bar__minus_01_dot_93_bar__plus_00_dot_90_bar__minus_01_dot_17 - receptacle
        Sink_bar__plus_01_dot_48_bar__plus_00_dot_81_bar__minus_01_dot_62_bar_SinkBasin - receptacle
        StoveBurner_bar__minus_00_dot_12_bar__plus_00_dot_92_bar__minus_01_dot_71 - receptacle
        loc_bar_0_bar_0_bar_2_bar_30 - location
        loc_bar_0_bar__minus_4_bar_2_bar_45 - location
        loc_bar_2_bar__minus_2_bar_2_bar_45 - location
        loc_bar_3_bar__minus_3_bar_2_bar_45 - location
        loc_bar_4_bar_3_bar_1_bar_45 - location
        loc_bar_4_bar__minus_3_bar_2_bar_45 - location
        loc_bar_6_bar_5_bar_1_bar_60 - location
        loc_bar__minus_4_bar_3_bar_3_bar_45 - location
        loc_bar__minus_4_bar_6_bar_3_bar_45 - location
        loc_bar__minus_4_bar__minus_2_bar_3_bar_45 - location
        loc_bar__minus_5_bar_0_bar_3_bar_30 - location
        loc_bar__minus_5_bar__minus_1_bar_3_bar_45 - location
        loc_bar__minus_5_bar__minus_4_bar_3_bar_15 - location
        loc_bar__minus_6_bar_4_bar_3_bar_15 - location
        )

(:init
        (receptacleType Cabinet_bar__minus_01_dot_55_bar__plus_00_dot_40_bar__plus_00_dot_62 CabinetType)
        (receptacleType Cabinet_bar__minus_01_dot_55_bar__plus_00_dot_40_bar__plus_01_dot_78 CabinetType)
        (receptacleType CoffeeMachine_bar__minus_01_dot_98_bar__plus_00_dot_90_bar__minus_00_dot_01 CoffeeMachineType)
        (receptacleType CounterTop_bar__minus_01_dot_87_bar__plus_00_dot_95_bar__minus_00_dot_31 CounterTopType)
        (receptacleType CounterTop_bar__plus_00_dot_84_bar__plus_00_dot_95_bar__minus_01_dot_50 CounterTopType)
        (receptacleType DiningTable_bar__plus_01_dot_20_bar__plus_00_dot_67_bar__plus_01_dot_05 DiningTableType)
        (receptacleType Drawer_bar__minus_01_dot_61_bar__plus_00_dot_78_bar__minus_00_dot_70 DrawerType)
        (receptacleType Drawer_bar__plus_00_dot_95_bar__plus_00_dot_78_bar__minus_01_dot_36 DrawerType)
        (receptacleType Fridge_bar__minus_02_dot_10_bar__plus_00_dot_00_bar__plus_01_dot_07 FridgeType)
        (receptacleType GarbageCan_bar__plus_02_dot_05_bar__plus_00_dot_00_bar__plus_01_dot_82 GarbageCanType)
        (receptacleType Microwave_bar__minus_01_dot_93_bar__plus_00_dot_90_bar__minus_01_dot_17 MicrowaveType)
        (receptacleType Sink_bar__plus_01_dot_48_bar__plus_00_dot_81_bar__minus_01_dot_62_bar_SinkBasin SinkBasinType)
        (receptacleType StoveBurner_bar__minus_00_dot_12_bar__plus_00_dot_92_bar__minus_01_dot_71 StoveBurnerType)
        (objectType Apple_bar__plus_01_dot_15_bar__plus_00_dot_77_bar__plus_00_dot_96 AppleType)
        (objectType Bread_bar__minus_01_dot_80_bar__plus_01_dot_01_bar__minus_00_dot_25 BreadType)
        (objectType Cup_bar__plus_01_dot_53_bar__plus_00_dot_78_bar__minus_01_dot_59 CupType)
        (objectType Egg_bar__minus_02_dot_02_bar__plus_00_dot_85_bar__plus_01_dot_01 EggType)
        (objectType Knife_bar__plus_01_dot_02_bar__plus_00_dot_93_bar__minus_01_dot_62 KnifeType)
        (objectType Mug_bar__plus_01_dot_31_bar__plus_00_dot_68_bar__plus_01_dot_14 MugType)
        (objectType Pan_bar__minus_00_dot_10_bar__plus_00_dot_95_bar__minus_01_dot_68 PanType)
        (objectType PepperShaker_bar__minus_01_dot_49_bar__plus_00_dot_42_bar__plus_01_dot_71 PepperShakerType)
        (objectType Plate_bar__minus_01_dot_62_bar__plus_00_dot_41_bar__plus_00_dot_70 PlateType)
        (objectType SaltShaker_bar__plus_00_dot_71_bar__plus_00_dot_91_bar__minus_01_dot_38 SaltShakerType)
        (objectType Spoon_bar__plus_00_dot_99_bar__plus_00_dot_73_bar__minus_01_dot_33 SpoonType)
        (objectType Tomato_bar__minus_02_dot_15_bar__plus_01_dot_24_bar__plus_01_dot_13 TomatoType)
        (canContain CabinetType CupType)
        (canContain CabinetType MugType)
        (canContain CabinetType PanType)
        (canContain CabinetType PepperShakerType)
        (canContain CabinetType PlateType)
        (canContain CabinetType SaltShakerType)
        (canContain CoffeeMachineType MugType)
        (canContain CounterTopType AppleType)
        (canContain CounterTopType BreadType)
        (canContain CounterTopType CupType)
        (canContain CounterTopType EggType)
        (canContain CounterTopType KnifeType)
        (canContain CounterTopType MugType)
        (canContain CounterTopType PanType)
        (canContain CounterTopType PepperShakerType)
        (canContain CounterTopType PlateType)
        (canContain CounterTopType SaltShakerType)
        (canContain CounterTopType SpoonType)
        (canContain CounterTopType TomatoType)
        (canContain DiningTableType AppleType)
        (canContain DiningTableType BreadType)
        (canContain DiningTableType CupType)
        (canContain DiningTableType EggType)
        (canContain DiningTableType KnifeType)
        (canContain DiningTableType MugType)
        (canContain DiningTableType PanType)
        (canContain DiningTableType PepperShakerType)
        (canContain DiningTableType PlateType)
        (canContain DiningTableType SaltShakerType)
        (canContain DiningTableType SpoonType)
        (canContain DiningTableType TomatoType)
        (canContain DrawerType KnifeType)
        (canContain DrawerType PepperShakerType)
        (canContain DrawerType SaltShakerType)
        (canContain DrawerType SpoonType)
        (canContain FridgeType AppleType)
        (canContain FridgeType BreadType)
        (canContain FridgeType CupType)
        (canContain FridgeType EggType)
        (canContain FridgeType MugType)
        (canContain FridgeType PanType)
        (canContain FridgeType PlateType)
        (canContain FridgeType TomatoType)
        (canContain GarbageCanType AppleType)
        (canContain GarbageCanType BreadType)
        (canContain GarbageCanType EggType)
        (canContain GarbageCanType TomatoType)
        (canContain MicrowaveType AppleType)
        (canContain MicrowaveType BreadType)
        (canContain MicrowaveType CupType)
        (canContain MicrowaveType EggType)
        (canContain MicrowaveType MugType)
        (canContain MicrowaveType PlateType)
        (canContain MicrowaveType TomatoType)
        (canContain SinkBasinType AppleType)
        (canContain SinkBasinType CupType)
        (canContain SinkBasinType EggType)
        (canContain SinkBasinType KnifeType)
        (canContain SinkBasinType MugType)
        (canContain SinkBasinType PanType)
        (canContain SinkBasinType PlateType)
        (canContain SinkBasinType SpoonType)
        (canContain SinkBasinType TomatoType)
        (canContain StoveBurnerType PanType)
        (pickupable Apple_bar__plus_01_dot_15_bar__plus_00_dot_77_bar__plus_00_dot_96)
        (pickupable Bread_bar__minus_01_dot_80_bar__plus_01_dot_01_bar__minus_00_dot_25)
        (pickupable Cup_bar__plus_01_dot_53_bar__plus_00_dot_78_bar__minus_01_dot_59)
        (pickupable Egg_bar__minus_02_dot_02_bar__plus_00_dot_85_bar__plus_01_dot_01)
        (pickupable Knife_bar__plus_01_dot_02_bar__plus_00_dot_93_bar__minus_01_dot_62)
        (pickupable Mug_bar__plus_01_dot_31_bar__plus_00_dot_68_bar__plus_01_dot_14)
        (pickupable Pan_bar__minus_00_dot_10_bar__plus_00_dot_95_bar__minus_01_dot_68)
        (pickupable PepperShaker_bar__minus_01_dot_49_bar__plus_00_dot_42_bar__plus_01_dot_71)
        (pickupable Plate_bar__minus_01_dot_62_bar__plus_00_dot_41_bar__plus_00_dot_70)
        (pickupable SaltShaker_bar__plus_00_dot_71_bar__plus_00_dot_91_bar__minus_01_dot_38)
        (pickupable Spoon_bar__plus_00_dot_99_bar__plus_00_dot_73_bar__minus_01_dot_33)
        (pickupable Tomato_bar__minus_02_dot_15_bar__plus_01_dot_24_bar__plus_01_dot_13)
        (isReceptacleObject Cup_bar__plus_01_dot_53_bar__plus_00_dot_78_bar__minus_01_dot_59)
        (isReceptacleObject Mug_bar__plus_01_dot_31_bar__plus_00_dot_68_bar__plus_01_dot_14)
        (isReceptacleObject Pan_bar__minus_00_dot_10_bar__plus_00_dot_95_bar__minus_01_dot_68)
        (isReceptacleObject Plate_bar__minus_01_dot_62_bar__plus_00_dot_41_bar__plus_00_dot_70)
        (openable Cabinet_bar__minus_01_dot_55_bar__plus_00_dot_40_bar__plus_00_dot_62)
        (openable Cabinet_bar__minus_01_dot_55_bar__plus_00_dot_40_bar__plus_01_dot_78)
        (openable Drawer_bar__minus_01_dot_61_bar__plus_00_dot_78_bar__minus_00_dot_70)
        (openable Drawer_bar__plus_00_dot_95_bar__plus_00_dot_78_bar__minus_01_dot_36)
        (openable Fridge_bar__minus_02_dot_10_bar__plus_00_dot_00_bar__plus_01_dot_07)
        (openable Microwave_bar__minus_01_dot_93_bar__plus_00_dot_90_bar__minus_01_dot_17)
        (atLocation agent1 loc_bar_0_bar_0_bar_2_bar_30)
        (cleanable Apple_bar__plus_01_dot_15_bar__plus_00_dot_77_bar__plus_00_dot_96)
        (cleanable Cup_bar__plus_01_dot_53_bar__plus_00_dot_78_bar__minus_01_dot_59)
        (cleanable Egg_bar__minus_02_dot_02_bar__plus_00_dot_85_bar__plus_01_dot_01)
        (cleanable Knife_bar__plus_01_dot_02_bar__plus_00_dot_93_bar__minus_01_dot_62)
        (cleanable Mug_bar__plus_01_dot_31_bar__plus_00_dot_68_bar__plus_01_dot_14)
        (cleanable Pan_bar__minus_00_dot_10_bar__plus_00_dot_95_bar__minus_01_dot_68)
        (cleanable Plate_bar__minus_01_dot_62_bar__plus_00_dot_41_bar__plus_00_dot_70)
        (cleanable Spoon_bar__plus_00_dot_99_bar__plus_00_dot_73_bar__minus_01_dot_33)
        (cleanable Tomato_bar__minus_02_dot_15_bar__plus_01_dot_24_bar__plus_01_dot_13)
        (heatable Apple_bar__plus_01_dot_15_bar__plus_00_dot_77_bar__plus_00_dot_96)
        (heatable Bread_bar__minus_01_dot_80_bar__plus_01_dot_01_bar__minus_00_dot_25)
        (heatable Cup_bar__plus_01_dot_53_bar__plus_00_dot_78_bar__minus_01_dot_59)
        (heatable Egg_bar__minus_02_dot_02_bar__plus_00_dot_85_bar__plus_01_dot_01)
        (heatable Mug_bar__plus_01_dot_31_bar__plus_00_dot_68_bar__plus_01_dot_14)
        (heatable Plate_bar__minus_01_dot_62_bar__plus_00_dot_41_bar__plus_00_dot_70)
        (heatable Tomato_bar__minus_02_dot_15_bar__plus_01_dot_24_bar__plus_01_dot_13)
        (coolable Apple_bar__plus_01_dot_15_bar__plus_00_dot_77_bar__plus_00_dot_96)
        (coolable Bread_bar__minus_01_dot_80_bar__plus_01_dot_01_bar__minus_00_dot_25)
        (coolable Cup_bar__plus_01_dot_53_bar__plus_00_dot_78_bar__minus_01_dot_59)
        (coolable Egg_bar__minus_02_dot_02_bar__plus_00_dot_85_bar__plus_01_dot_01)
        (coolable Mug_bar__plus_01_dot_31_bar__plus_00_dot_68_bar__plus_01_dot_14)
        (coolable Pan_bar__minus_00_dot_10_bar__plus_00_dot_95_bar__minus_01_dot_68)
        (coolable Plate_bar__minus_01_dot_62_bar__plus_00_dot_41_bar__plus_00_dot_70)
        (coolable Tomato_bar__minus_02_dot_15_bar__plus_01_dot_24_bar__plus_01_dot_13)
        (inReceptacle Apple_bar__plus_01_dot_15_bar__plus_00_dot_77_bar__plus_00_dot_96 DiningTable_bar__plus_01_dot_20_bar__plus_00_dot_67_bar__plus_01_dot_05)
        (inReceptacle Bread_bar__minus_01_dot_80_bar__plus_01_dot_01_bar__minus_00_dot_25 CounterTop_bar__minus_01_dot_87_bar__plus_00_dot_95_bar__minus_00_dot_31)
        (inReceptacle Cup_bar__plus_01_dot_53_bar__plus_00_dot_78_bar__minus_01_dot_59 Sink_bar__plus_01_dot_48_bar__plus_00_dot_81_bar__minus_01_dot_62_bar_SinkBasin)
        (inReceptacle Egg_bar__minus_02_dot_02_bar__plus_00_dot_85_bar__plus_01_dot_01 Fridge_bar__minus_02_dot_10_bar__plus_00_dot_00_bar__plus_01_dot_07)
        (inReceptacle Knife_bar__plus_01_dot_02_bar__plus_00_dot_93_bar__minus_01_dot_62 CounterTop_bar__plus_00_dot_84_bar__plus_00_dot_95_bar__minus_01_dot_50)
        (inReceptacle Mug_bar__plus_01_dot_31_bar__plus_00_dot_68_bar__plus_01_dot_14 DiningTable_bar__plus_01_dot_20_bar__plus_00_dot_67_bar__plus_01_dot_05)
        (inReceptacle Pan_bar__minus_00_dot_10_bar__plus_00_dot_95_bar__minus_01_dot_68 StoveBurner_bar__minus_00_dot_12_bar__plus_00_dot_92_bar__minus_01_dot_71)
        (inReceptacle PepperShaker_bar__minus_01_dot_49_bar__plus_00_dot_42_bar__plus_01_dot_71 Cabinet_bar__minus_01_dot_55_bar__plus_00_dot_40_bar__plus_01_dot_78)
        (inReceptacle Plate_bar__minus_01_dot_62_bar__plus_00_dot_41_bar__plus_00_dot_70 Cabinet_bar__minus_01_dot_55_bar__plus_00_dot_40_bar__plus_00_dot_62)
        (inReceptacle SaltShaker_bar__plus_00_dot_71_bar__plus_00_dot_91_bar__minus_01_dot_38 CounterTop_bar__plus_00_dot_84_bar__plus_00_dot_95_bar__minus_01_dot_50)
        (inReceptacle Spoon_bar__plus_00_dot_99_bar__plus_00_dot_73_bar__minus_01_dot_33 Drawer_bar__plus_00_dot_95_bar__plus_00_dot_78_bar__minus_01_dot_36)
        (inReceptacle Tomato_bar__minus_02_dot_15_bar__plus_01_dot_24_bar__plus_01_dot_13 Fridge_bar__minus_02_dot_10_bar__plus_00_dot_00_bar__plus_01_dot_07)
        (receptacleAtLocation Cabinet_bar__minus_01_dot_55_bar__plus_00_dot_40_bar__plus_00_dot_62 loc_bar__minus_4_bar_3_bar_3_bar_45)
        (receptacleAtLocation Cabinet_bar__minus_01_dot_55_bar__plus_00_dot_40_bar__plus_01_dot_78 loc_bar__minus_4_bar_6_bar_3_bar_45)
        (receptacleAtLocation CoffeeMachine_bar__minus_01_dot_98_bar__plus_00_dot_90_bar__minus_00_dot_01 loc_bar__minus_5_bar_0_bar_3_bar_30)
        (receptacleAtLocation CounterTop_bar__minus_01_dot_87_bar__plus_00_dot_95_bar__minus_00_dot_31 loc_bar__minus_5_bar__minus_1_bar_3_bar_45)
        (receptacleAtLocation CounterTop_bar__plus_00_dot_84_bar__plus_00_dot_95_bar__minus_01_dot_50 loc_bar_3_bar__minus_3_bar_2_bar_45)
        (receptacleAtLocation DiningTable_bar__plus_01_dot_20_bar__plus_00_dot_67_bar__plus_01_dot_05 loc_bar_4_bar_3_bar_1_bar_45)
        (receptacleAtLocation Drawer_bar__minus_01_dot_61_bar__plus_00_dot_78_bar__minus_00_dot_70 loc_bar__minus_4_bar__minus_2_bar_3_bar_45)
        (receptacleAtLocation Drawer_bar__plus_00_dot_95_bar__plus_00_dot_78_bar__minus_01_dot_36 loc_bar_2_bar__minus_2_bar_2_bar_45)
        (receptacleAtLocation Fridge_bar__minus_02_dot_10_bar__plus_00_dot_00_bar__plus_01_dot_07 loc_bar__minus_6_bar_4_bar_3_bar_15)
        (receptacleAtLocation GarbageCan_bar__plus_02_dot_05_bar__plus_00_dot_00_bar__plus_01_dot_82 loc_bar_6_bar_5_bar_1_bar_60)
        (receptacleAtLocation Microwave_bar__minus_01_dot_93_bar__plus_00_dot_90_bar__minus_01_dot_17 loc_bar__minus_5_bar__minus_4_bar_3_bar_15)
        (receptacleAtLocation Sink_bar__plus_01_dot_48_bar__plus_00_dot_81_bar__minus_01_dot_62_bar_SinkBasin loc_bar_4_bar__minus_3_bar_2_bar_45)
        (receptacleAtLocation StoveBurner_bar__minus_00_dot_12_bar__plus_00_dot_92_bar__minus_01_dot_71 loc_bar_0_bar__minus_4_bar_2_bar_45)
        (objectAtLocation Apple_bar__plus_01_dot_15_bar__plus_00_dot_77_bar__plus_00_dot_96 loc_bar_4_bar_3_bar_1_bar_45)
        (objectAtLocation Bread_bar__minus_01_dot_80_bar__plus_01_dot_01_bar__minus_00_dot_25 loc_bar__minus_5_bar__minus_1_bar_3_bar_45)
        (objectAtLocation Cup_bar__plus_01_dot_53_bar__plus_00_dot_78_bar__minus_01_dot_59 loc_bar_4_bar__minus_3_bar_2_bar_45)
        (objectAtLocation Egg_bar__minus_02_dot_02_bar__plus_00_dot_85_bar__plus_01_dot_01 loc_bar__minus_6_bar_4_bar_3_bar_15)
        (objectAtLocation Knife_bar__plus_01_dot_02_bar__plus_00_dot_93_bar__minus_01_dot_62 loc_bar_3_bar__minus_3_bar_2_bar_45)
        (objectAtLocation Mug_bar__plus_01_dot_31_bar__plus_00_dot_68_bar__plus_01_dot_14 loc_bar_4_bar_3_bar_1_bar_45)
        (objectAtLocation Pan_bar__minus_00_dot_10_bar__plus_00_dot_95_bar__minus_01_dot_68 loc_bar_0_bar__minus_4_bar_2_bar_45)
        (objectAtLocation PepperShaker_bar__minus_01_dot_49_bar__plus_00_dot_42_bar__plus_01_dot_71 loc_bar__minus_4_bar_6_bar_3_bar_45)
        (objectAtLocation Plate_bar__minus_01_dot_62_bar__plus_00_dot_41_bar__plus_00_dot_70 loc_bar__minus_4_bar_3_bar_3_bar_45)
        (objectAtLocation SaltShaker_bar__plus_00_dot_71_bar__plus_00_dot_91_bar__minus_01_dot_38 loc_bar_3_bar__minus_3_bar_2_bar_45)
        (objectAtLocation Spoon_bar__plus_00_dot_99_bar__plus_00_dot_73_bar__minus_01_dot_33 loc_bar_2_bar__minus_2_bar_2_bar_45)
        (objectAtLocation Tomato_bar__minus_02_dot_15_bar__plus_01_dot_24_bar__plus_01_dot_13 loc_bar__minus_6_bar_4_bar_3_bar_15)
        )

    (:goal
        (and
            (exists (?r - receptacle)
                (exists (?o - object)
                    (and
                        (inReceptacle ?o ?r)
                        (objectType ?o PepperShakerType)
                        (receptacleType ?r DrawerType)
                    )
                )
            )
        )
    )
)
