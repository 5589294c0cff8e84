; agentgym built-in ALFWorld game: pick_clean_then_place_in_recep
; Your task is to: put a clean soapbar in cabinet.
; A hand-written scene in the problem format of ALFWorld's game.tw-pddl files; it is played
; with the alfred.pddl domain and alfred.twl2 grammar that the alfworld package ships.
(define (problem plan_builtin_pick_clean_then_place_in_recep)
(:domain alfred)
(:objects
        agent1 - agent
        CandleType - otype
        ClothType - otype
        DishSpongeType - otype
        HandTowelType - otype
        SoapBarType - otype
        SoapBottleType - otype
        SprayBottleType - otype
        ToiletPaperType - otype
        TowelType - otype
        BathtubBasinType - rtype
        CabinetType - rtype
        CounterTopType - rtype
        GarbageCanType - rtype
        HandTowelHolderType - rtype
        SinkBasinType - rtype
        ToiletType - rtype
        ToiletPaperHangerType - rtype
        TowelHolderType - rtype
        Candle_bar__minus_00_dot_15_bar__plus_00_dot_82_bar__minus_02_dot_34 - object
        Cloth_bar__plus_01_dot_30_bar__plus_00_dot_45_bar__plus_01_dot_20 - object
        DishSponge_bar__minus_01_dot_44_bar__plus_00_dot_11_bar__plus_00_dot_55 - object
        HandTowel_bar__plus_00_dot_90_bar__plus_01_dot_50_bar__minus_02_dot_38 - object
        SoapBar_bar__minus_01_dot_52_bar__plus_00_dot_86_bar__minus_00_dot_65 - object
        SoapBottle_bar__plus_00_dot_21_bar__plus_00_dot_82_bar__minus_02_dot_28 - object
        SprayBottle_bar__plus_00_dot_52_bar__plus_00_dot_06_bar__minus_02_dot_14 - object
        ToiletPaper_bar__minus_00_dot_36_bar__plus_00_dot_06_bar__minus_02_dot_17 - object
        Towel_bar__plus_01_dot_68_bar__plus_01_dot_02_bar__plus_00_dot_21 - object
        Bathtub_bar__plus_01_dot_22_bar__plus_00_dot_40_bar__plus_01_dot_15_bar_BathtubBasin - receptacle
        Cabinet_bar__minus_00_dot_31_bar__plus_00_dot_35_bar__minus_02_dot_10 - receptacle
        Cabinet_bar__plus_00_dot_48_bar__plus_00_dot_35_bar__minus_02_dot_10 - receptacle
        CounterTop_bar__plus_00_dot_08_bar__plus_00_dot_80_bar__minus_02_dot_30 - receptacle
        GarbageCan_bar__minus_01_dot_45_bar__plus_00_dot_00_bar__plus_00_dot_52 - receptacle
        HandTowelHolder_bar__plus_00_dot_90_bar__plus_01_dot_60_bar__minus_02_dot_42 - receptacle
        Sink_bar__plus_00_dot_08_bar__plus_00_dot_79_bar__minus_02_dot_20_bar_SinkBasin - receptacle
        ToiletPaperHanger_bar__minus_01_dot_72_bar__plus_00_dot_90_bar__minus_00_dot_95 - receptacle
        Toilet_bar__minus_01_dot_40_bar__plus_00_dot_00_bar__minus_00_dot_72 - receptacle
        TowelHolder_bar__plus_01_dot_71_bar__plus_01_dot_10_bar__plus_00_dot_21 - receptacle
        loc_bar_0_bar_0_bar_1_bar_30 - location
        loc_bar_0_bar__minus_6_bar_2_bar_45 - location
        loc_bar_1_bar__minus_6_bar_2_bar_45 - location
        loc_bar_2_bar__minus_5_bar_2_bar_30 - location
        loc_bar_3_bar_3_bar_1_bar_60 - location
        loc_bar_3_bar__minus_6_bar_2_bar_0 - location
        loc_bar_5_bar_1_bar_1_bar_15 - location
        loc_bar__minus_1_bar__minus_5_bar_2_bar_30 - location
        loc_bar__minus_4_bar_2_bar_3_bar_60 - location
        loc_bar__minus_4_bar__minus_3_bar_3_bar_60 - location
        loc_bar__minus_5_bar__minus_4_bar_3_bar_30 - location
        )

(:init
        (receptacleType Bathtub_bar__plus_01_dot_22_bar__plus_00_dot_40_bar__plus_01_dot_15_bar_BathtubBasin BathtubBasinType)
        (receptacleType Cabinet_bar__minus_00_dot_31_bar__plus_00_dot_35_bar__minus_02_dot_10 CabinetType)
        (receptacleType Cabinet_bar__plus_00_dot_48_bar__plus_00_dot_35_bar__minus_02_dot_10 CabinetType)
        (receptacleType CounterTop_bar__plus_00_dot_08_bar__plus_00_dot_80_bar__minus_02_dot_30 CounterTopType)
        (receptacleType GarbageCan_bar__minus_01_dot_45_bar__plus_00_dot_00_bar__plus_00_dot_52 GarbageCanType)
        (receptacleType HandTowelHolder_bar__plus_00_dot_90_bar__plus_01_dot_60_bar__minus_02_dot_42 HandTowelHolderType)
        (receptacleType Sink_bar__plus_00_dot_08_bar__plus_00_dot_79_bar__minus_02_dot_20_bar_SinkBasin SinkBasinType)
        (receptacleType ToiletPaperHanger_bar__minus_01_dot_72_bar__plus_00_dot_90_bar__minus_00_dot_95 ToiletPaperHangerType)
        (receptacleType Toilet_bar__minus_01_dot_40_bar__plus_00_dot_00_bar__minus_00_dot_72 ToiletType)
        (receptacleType TowelHolder_bar__plus_01_dot_71_bar__plus_01_dot_10_bar__plus_00_dot_21 TowelHolderType)
        (objectType Candle_bar__minus_00_dot_15_bar__plus_00_dot_82_bar__minus_02_dot_34 CandleType)
        (objectType Cloth_bar__plus_01_dot_30_bar__plus_00_dot_45_bar__plus_01_dot_20 ClothType)
        (objectType DishSponge_bar__minus_01_dot_44_bar__plus_00_dot_11_bar__plus_00_dot_55 DishSpongeType)
        (objectType HandTowel_bar__plus_00_dot_90_bar__plus_01_dot_50_bar__minus_02_dot_38 HandTowelType)
        (objectType SoapBar_bar__minus_01_dot_52_bar__plus_00_dot_86_bar__minus_00_dot_65 SoapBarType)
        (objectType SoapBottle_bar__plus_00_dot_21_bar__plus_00_dot_82_bar__minus_02_dot_28 SoapBottleType)
        (objectType SprayBottle_bar__plus_00_dot_52_bar__plus_00_dot_06_bar__minus_02_dot_14 SprayBottleType)
        (objectType ToiletPaper_bar__minus_00_dot_36_bar__plus_00_dot_06_bar__minus_02_dot_17 ToiletPaperType)
        (objectType Towel_bar__plus_01_dot_68_bar__plus_01_dot_02_bar__plus_00_dot_21 TowelType)
        (canContain BathtubBasinType ClothType)
        (canContain BathtubBasinType DishSpongeType)
        (canContain BathtubBasinType HandTowelType)
        (canContain BathtubBasinType SoapBarType)
        (canContain CabinetType CandleType)
        (canContain CabinetType ClothType)
        (canContain CabinetType DishSpongeType)
        (canContain CabinetType HandTowelType)
        (canContain CabinetType SoapBarType)
        (canContain CabinetType SoapBottleType)
        (canContain CabinetType SprayBottleType)
        (canContain CabinetType ToiletPaperType)
        (canContain CounterTopType CandleType)
        (canContain CounterTopType ClothType)
        (canContain CounterTopType DishSpongeType)
        (canContain CounterTopType HandTowelType)
        (canContain CounterTopType SoapBarType)
        (canContain CounterTopType SoapBottleType)
        (canContain CounterTopType SprayBottleType)
        (canContain CounterTopType ToiletPaperType)
        (canContain GarbageCanType ClothType)
        (canContain GarbageCanType DishSpongeType)
        (canContain GarbageCanType HandTowelType)
        (canContain GarbageCanType SoapBarType)
        (canContain GarbageCanType SoapBottleType)
        (canContain GarbageCanType SprayBottleType)
        (canContain GarbageCanType ToiletPaperType)
        (canContain HandTowelHolderType HandTowelType)
        (canContain SinkBasinType ClothType)
        (canContain SinkBasinType DishSpongeType)
        (canContain SinkBasinType HandTowelType)
        (canContain SinkBasinType SoapBarType)
        (canContain ToiletType CandleType)
        (canContain ToiletType ClothType)
        (canContain ToiletType DishSpongeType)
        (canContain ToiletType HandTowelType)
        (canContain ToiletType SoapBarType)
        (canContain ToiletType SoapBottleType)
        (canContain ToiletType SprayBottleType)
        (canContain ToiletType ToiletPaperType)
        (canContain ToiletPaperHangerType ToiletPaperType)
        (canContain TowelHolderType TowelType)
        (pickupable Candle_bar__minus_00_dot_15_bar__plus_00_dot_82_bar__minus_02_dot_34)
        (pickupable Cloth_bar__plus_01_dot_30_bar__plus_00_dot_45_bar__plus_01_dot_20)
        (pickupable DishSponge_bar__minus_01_dot_44_bar__plus_00_dot_11_bar__plus_00_dot_55)
        (pickupable HandTowel_bar__plus_00_dot_90_bar__plus_01_dot_50_bar__minus_02_dot_38)
        (pickupable SoapBar_bar__minus_01_dot_52_bar__plus_00_dot_86_bar__minus_00_dot_65)
        (pickupable SoapBottle_bar__plus_00_dot_21_bar__plus_00_dot_82_bar__minus_02_dot_28)
        (pickupable SprayBottle_bar__plus_00_dot_52_bar__plus_00_dot_06_bar__minus_02_dot_14)
        (pickupable ToiletPaper_bar__minus_00_dot_36_bar__plus_00_dot_06_bar__minus_02_dot_17)
        (pickupable Towel_bar__plus_01_dot_68_bar__plus_01_dot_02_bar__plus_00_dot_21)
        (openable Cabinet_bar__minus_00_dot_31_bar__plus_00_dot_35_bar__minus_02_dot_10)
        (openable Cabinet_bar__plus_00_dot_48_bar__plus_00_dot_35_bar__minus_02_dot_10)
        (atLocation agent1 loc_bar_0_bar_0_bar_1_bar_30)
        (cleanable Cloth_bar__plus_01_dot_30_bar__plus_00_dot_45_bar__plus_01_dot_20)
        (cleanable DishSponge_bar__minus_01_dot_44_bar__plus_00_dot_11_bar__plus_00_dot_55)
        (cleanable SoapBar_bar__minus_01_dot_52_bar__plus_00_dot_86_bar__minus_00_dot_65)
        (inReceptacle Candle_bar__minus_00_dot_15_bar__plus_00_dot_82_bar__minus_02_dot_34 CounterTop_bar__plus_00_dot_08_bar__plus_00_dot_80_bar__minus_02_dot_30)
        (inReceptacle Cloth_bar__plus_01_dot_30_bar__plus_00_dot_45_bar__plus_01_dot_20 Bathtub_bar__plus_01_dot_22_bar__plus_00_dot_40_bar__plus_01_dot_15_bar_BathtubBasin)
        (inReceptacle DishSponge_bar__minus_01_dot_44_bar__plus_00_dot_11_bar__plus_00_dot_55 GarbageCan_bar__minus_01_dot_45_bar__plus_00_dot_00_bar__plus_00_dot_52)
        (inReceptacle HandTowel_bar__plus_00_dot_90_bar__plus_01_dot_50_bar__minus_02_dot_38 HandTowelHolder_bar__plus_00_dot_90_bar__plus_01_dot_60_bar__minus_02_dot_42)
        (inReceptacle SoapBar_bar__minus_01_dot_52_bar__plus_00_dot_86_bar__minus_00_dot_65 Toilet_bar__minus_01_dot_40_bar__plus_00_dot_00_bar__minus_00_dot_72)
        (inReceptacle SoapBottle_bar__plus_00_dot_21_bar__plus_00_dot_82_bar__minus_02_dot_28 CounterTop_bar__plus_00_dot_08_bar__plus_00_dot_80_bar__minus_02_dot_30)
        (inReceptacle SprayBottle_bar__plus_00_dot_52_bar__plus_00_dot_06_bar__minus_02_dot_14 Cabinet_bar__plus_00_dot_48_bar__plus_00_dot_35_bar__minus_02_dot_10)
        (inReceptacle ToiletPaper_bar__minus_00_dot_36_bar__plus_00_dot_06_bar__minus_02_dot_17 Cabinet_bar__minus_00_dot_31_bar__plus_00_dot_35_bar__minus_02_dot_10)
        (inReceptacle Towel_bar__plus_01_dot_68_bar__plus_01_dot_02_bar__plus_00_dot_21 TowelHolder_bar__plus_01_dot_71_bar__plus_01_dot_10_bar__plus_00_dot_21)
        (receptacleAtLocation Bathtub_bar__plus_01_dot_22_bar__plus_00_dot_40_bar__plus_01_dot_15_bar_BathtubBasin loc_bar_3_bar_3_bar_1_bar_60)
        (receptacleAtLocation Cabinet_bar__minus_00_dot_31_bar__plus_00_dot_35_bar__minus_02_dot_10 loc_bar__minus_1_bar__minus_5_bar_2_bar_30)
        (receptacleAtLocation Cabinet_bar__plus_00_dot_48_bar__plus_00_dot_35_bar__minus_02_dot_10 loc_bar_2_bar__minus_5_bar_2_bar_30)
        (receptacleAtLocation CounterTop_bar__plus_00_dot_08_bar__plus_00_dot_80_bar__minus_02_dot_30 loc_bar_0_bar__minus_6_bar_2_bar_45)
        (receptacleAtLocation GarbageCan_bar__minus_01_dot_45_bar__plus_00_dot_00_bar__plus_00_dot_52 loc_bar__minus_4_bar_2_bar_3_bar_60)
        (receptacleAtLocation HandTowelHolder_bar__plus_00_dot_90_bar__plus_01_dot_60_bar__minus_02_dot_42 loc_bar_3_bar__minus_6_bar_2_bar_0)
        (receptacleAtLocation Sink_bar__plus_00_dot_08_bar__plus_00_dot_79_bar__minus_02_dot_20_bar_SinkBasin loc_bar_1_bar__minus_6_bar_2_bar_45)
        (receptacleAtLocation ToiletPaperHanger_bar__minus_01_dot_72_bar__plus_00_dot_90_bar__minus_00_dot_95 loc_bar__minus_5_bar__minus_4_bar_3_bar_30)
        (receptacleAtLocation Toilet_bar__minus_01_dot_40_bar__plus_00_dot_00_bar__minus_00_dot_72 loc_bar__minus_4_bar__minus_3_bar_3_bar_60)
        (receptacleAtLocation TowelHolder_bar__plus_01_dot_71_bar__plus_01_dot_10_bar__plus_00_dot_21 loc_bar_5_bar_1_bar_1_bar_15)
        (objectAtLocation Candle_bar__minus_00_dot_15_bar__plus_00_dot_82_bar__minus_02_dot_34 loc_bar_0_bar__minus_6_bar_2_bar_45)
        (objectAtLocation Cloth_bar__plus_01_dot_30_bar__plus_00_dot_45_bar__plus_01_dot_20 loc_bar_3_bar_3_bar_1_bar_60)
        (objectAtLocation DishSponge_bar__minus_01_dot_44_bar__plus_00_dot_11_bar__plus_00_dot_55 loc_bar__minus_4_bar_2_bar_3_bar_60)
        (objectAtLocation HandTowel_bar__plus_00_dot_90_bar__plus_01_dot_50_bar__minus_02_dot_38 loc_bar_3_bar__minus_6_bar_2_bar_0)
        (objectAtLocation SoapBar_bar__minus_01_dot_52_bar__plus_00_dot_86_bar__minus_00_dot_65 loc_bar__minus_4_bar__minus_3_bar_3_bar_60)
        (objectAtLocation SoapBottle_bar__plus_00_dot_21_bar__plus_00_dot_82_bar__minus_02_dot_28 loc_bar_0_bar__minus_6_bar_2_bar_45)
        (objectAtLocation SprayBottle_bar__plus_00_dot_52_bar__plus_00_dot_06_bar__minus_02_dot_14 loc_bar_2_bar__minus_5_bar_2_bar_30)
        (objectAtLocation ToiletPaper_bar__minus_00_dot_36_bar__plus_00_dot_06_bar__minus_02_dot_17 loc_bar__minus_1_bar__minus_5_bar_2_bar_30)
        (objectAtLocation Towel_bar__plus_01_dot_68_bar__plus_01_dot_02_bar__plus_00_dot_21 loc_bar_5_bar_1_bar_1_bar_15)
        )

    (:goal
        (and
            (exists (?r - receptacle)
                (exists (?o - object)
                    (and
                        (cleanable ?o)
                        (objectType ?o SoapBarType)
                        (receptacleType ?r CabinetType)
                        (isClean ?o)
                        (inReceptacle ?o ?r)
                    )
                )
            )
        )
    )
)
